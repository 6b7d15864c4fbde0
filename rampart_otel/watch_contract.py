"""The watcher's contract: the names its spans carry (docs/watch.md, "Contract").

Readers of those spans (``conventions/watch.py``, ``processors/scopes.py``) import these
names alone, not the watcher (``watch.py``, which re-exports them): a ``score`` does not
build the watcher's hooks and classes to read its spans. Only the standard library, as
``watch.py``.
"""

from __future__ import annotations

SCOPE = "rampart_otel.watch"

# --- the contract: attribute keys (docs/watch.md, "Contract") ---------------------------------

ATTESTATION = "rampart.watch"  # on every span: the kinds the watcher sees in this process
BLIND = "rampart.watch.blind"  # on every span: what it cannot see there, as codes
OPEN_CONNECTIONS = "rampart.watch.open_connections"  # with blind pooled_connections
EVENT = "rampart.watch.event"  # on each watched span: the audit event's name
EVENTS_UNDER = "rampart.watch.events"  # on the span an event happened under: how many
REQUEST_BODY = "rampart.watch.request_body"
REQUEST_BODY_SIZE = "rampart.watch.request_body_size"
REQUEST_BODY_TRUNCATED = "rampart.watch.request_body_truncated"
OPEN_MODE = "rampart.watch.open_mode"
SOURCE_PATH = "rampart.watch.source_path"
SQLITE_PATH = "rampart.watch.sqlite_path"
RESOLVED_NAMES = "rampart.watch.resolved_names"
PARENT_REQUEST = "rampart.watch.parent_request"  # the request is its parent span's

NETWORK, HTTP_CLIENT, PROCESS, FILE_WRITE = "network", "http_client", "process", "file_write"
KINDS: tuple[str, ...] = (NETWORK, HTTP_CLIENT, PROCESS, FILE_WRITE)

# Blind codes (docs/watch.md, "What it cannot see").
POOLED_CONNECTIONS = "pooled_connections"
CHILD_PROCESS_IO = "child_process_io"

CONNECT_EVENTS = ("socket.connect", "socket.sendto", "socket.sendmsg")
FILE_EVENTS = (
    "open",
    "os.remove",
    "os.rmdir",
    "os.rename",
    "os.truncate",
    "shutil.rmtree",
    "os.symlink",
    "os.link",
    "os.chmod",
    "os.chown",
    "os.mkdir",
)
PROCESS_EVENTS = (
    "subprocess.Popen",
    "os.system",
    "os.exec",
    "os.spawn",
    "os.posix_spawn",
    "os.fork",
    "os.forkpty",
)
KIND_EVENTS: dict[str, tuple[str, ...]] = {
    NETWORK: CONNECT_EVENTS,
    HTTP_CLIENT: ("http.client.connect", "http.client.send"),
    PROCESS: PROCESS_EVENTS,
    FILE_WRITE: (*FILE_EVENTS, "sqlite3.connect"),
}

# On a span the watcher recorded for a command the platform module or ctypes ran.
PLATFORM_PROBE = "rampart.watch.platform_probe"
