"""Real instrumented sample agents, the scripted model they talk to, and their recorded traces."""
