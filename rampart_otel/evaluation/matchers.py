"""Three-valued value matchers for tool arguments, side-effect details and response text.

A matcher answers True, False, or None for "unknown": a value the trace did not capture
(a missing detail, an absent argument) cannot be said to match or not to match, and
saying False there would turn "not recorded" into "did not happen".
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from typing import Any, Final

import re2
from re2 import _re2  # the binding re2's wrapper calls: a yes/no search without its Match

from rampart_otel.model import Ambiguous
from rampart_otel.render import encodable


class _Missing:
    """The value of a key the trace did not carry."""

    _instance: _Missing | None = None

    def __new__(cls) -> _Missing:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "MISSING"

    def __bool__(self) -> bool:
        return False


MISSING: Final = _Missing()

Scalar = str | int | float | bool
_SCALARS = (str, int, float, bool)


def is_missing(value: Any) -> bool:
    """None counts as missing: OTLP has no null attribute, so None means "not captured"."""
    return value is MISSING or value is None


class Matcher(ABC):
    """Base of all matchers; ``match`` is three-valued and must not raise on any value."""

    __slots__ = ()

    def match(self, value: Any) -> bool | None:
        """True / False, or None when ``value`` is missing (or the inner answer is unknown)."""
        if is_missing(value):
            return None
        return self._match_present(value)

    @abstractmethod
    def _match_present(self, value: Any) -> bool | None: ...

    @abstractmethod
    def describe(self, subject: str) -> str:
        """A readable condition on ``subject`` for rationales, e.g. ``host not in ['a']``."""


def _same(value: Any, literal: Any) -> bool:
    """Equality that keeps booleans apart from numbers and compares lists with tuples."""
    if isinstance(literal, (list, tuple)):
        return (
            isinstance(value, (list, tuple))
            and len(value) == len(literal)
            and all(_same(v, lit) for v, lit in zip(value, literal, strict=True))
        )
    if isinstance(value, bool) != isinstance(literal, bool):
        return False
    if isinstance(value, (list, tuple, dict)):
        return False
    try:
        return bool(value == literal)
    except Exception:  # a hostile __eq__ cannot come from a trace, but stay total
        return False


def _texts(value: Any) -> list[str]:
    """The texts a pattern is tried on: a string, a number's text, each item of a list."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, bool):
        return ["true" if value else "false"]
    if isinstance(value, (int, float)):
        return [str(value)]
    if isinstance(value, (list, tuple)):
        return [
            text
            for item in value
            if not isinstance(item, (list, tuple, dict))
            for text in _texts(item)
        ]
    return []


def _check_scalar(value: Any, what: str) -> None:
    if not isinstance(value, _SCALARS):
        raise TypeError(f"{what} must be a string, number or boolean, not {type(value).__name__}")


@dataclass(frozen=True, repr=False, slots=True)
class Equals(Matcher):
    """A bare literal: equal value (booleans never equal numbers)."""

    literal: Scalar | tuple[Scalar, ...]

    def _match_present(self, value: Any) -> bool:
        return _same(value, self.literal)

    def describe(self, subject: str) -> str:
        return f"{subject} == {_literal_repr(self.literal)}"

    def __repr__(self) -> str:
        return _literal_repr(self.literal)


# RE2 matches in time linear in the text: a policy's pattern cannot backtrack for hours on
# hostile trace text (Python's ``re`` takes 30 s for ``(a+)+$`` on 28 characters).
_RE2 = re2.Options()
_RE2.log_errors = False  # a bad pattern is reported once, as a policy error, not on stderr
_RE2.never_capture = True  # only whether it matches is read
_UNANCHORED = _re2.RE2.Anchor.UNANCHORED
_NO_MATCH = (-1, -1)


@dataclass(frozen=True, repr=False, slots=True)
class Regex(Matcher):
    """RE2 search anywhere in the text; numbers by their text, lists if any item matches."""

    pattern: str
    compiled: Any = field(init=False, compare=False, repr=False)
    # The compiled RE2's own search on UTF-8 bytes: whether it matches, without the
    # wrapper's generator, offset decoding and match object (a third of the time).
    _match_bytes: Any = field(init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        if not isinstance(self.pattern, str):
            raise TypeError(f"regex() takes a string pattern, not {type(self.pattern).__name__}")
        try:
            compiled = re2.compile(self.pattern, options=_RE2)
            object.__setattr__(self, "compiled", compiled)
            object.__setattr__(self, "_match_bytes", compiled._regexp.Match)
        except re2.error as exc:
            reason = exc.args[0].decode() if exc.args and isinstance(exc.args[0], bytes) else exc
            raise ValueError(
                f"invalid regular expression {self.pattern!r}: {reason} (RE2 syntax: "
                "no backreferences or lookaround)"
            ) from None

    def _match_present(self, value: Any) -> bool:
        return any(self._search(text) for text in _texts(value))

    def _search(self, text: str) -> bool:
        """Whether :meth:`search` finds a match."""
        try:
            encoded = text.encode()
        except UnicodeEncodeError:  # a lone surrogate: read as U+FFFD, as ``search`` does
            encoded = encodable(text).encode()
        return self._match_bytes(_UNANCHORED, encoded, 0, len(encoded))[0] != _NO_MATCH

    def search(self, text: str) -> Any:
        """RE2's first match in ``text``, or None. RE2 reads UTF-8, which cannot hold a lone
        surrogate (JSON text can): each is read as U+FFFD, one character for one, so the
        match's positions are the text's own."""
        return self.compiled.search(encodable(text))

    def describe(self, subject: str) -> str:
        return f"{subject} matches regex {self.pattern!r}"

    def __repr__(self) -> str:
        return f"regex({self.pattern!r})"


@dataclass(frozen=True, repr=False, slots=True)
class Glob(Matcher):
    """Shell-style pattern over the whole text, case-sensitive (``fnmatchcase``)."""

    pattern: str

    def __post_init__(self) -> None:
        if not isinstance(self.pattern, str):
            raise TypeError(f"glob() takes a string pattern, not {type(self.pattern).__name__}")

    def _match_present(self, value: Any) -> bool:
        return any(fnmatchcase(text, self.pattern) for text in _texts(value))

    def describe(self, subject: str) -> str:
        return f"{subject} matches glob {self.pattern!r}"

    def __repr__(self) -> str:
        return f"glob({self.pattern!r})"


@dataclass(frozen=True, repr=False, slots=True)
class Contains(Matcher):
    """Substring of a string, item of a list, key of a mapping (case-sensitive)."""

    item: Scalar

    def __post_init__(self) -> None:
        _check_scalar(self.item, "contains() argument")

    def _match_present(self, value: Any) -> bool:
        if isinstance(value, str):
            needle = self.item if isinstance(self.item, str) else _texts(self.item)[0]
            return needle in value
        if isinstance(value, (list, tuple)):
            return any(_same(item, self.item) for item in value)
        if isinstance(value, dict):
            return isinstance(self.item, str) and self.item in value
        return False

    def describe(self, subject: str) -> str:
        return f"{subject} contains {self.item!r}"

    def __repr__(self) -> str:
        return f"contains({self.item!r})"


def _literal_list(values: Any, name: str) -> tuple[Scalar, ...]:
    if isinstance(values, (str, bytes)) or not isinstance(values, (list, tuple)):
        raise TypeError(f"{name}() takes a list of values, not {type(values).__name__}")
    for item in values:
        _check_scalar(item, f"each value of {name}()")
    return tuple(values)


@dataclass(frozen=True, repr=False, slots=True)
class OneOf(Matcher):
    """Equal to one of the listed values."""

    values: tuple[Scalar, ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "values", _literal_list(self.values, "one_of"))

    def _match_present(self, value: Any) -> bool:
        return any(_same(value, item) for item in self.values)

    def describe(self, subject: str) -> str:
        return f"{subject} in {list(self.values)!r}"

    def __repr__(self) -> str:
        return f"one_of({list(self.values)!r})"


@dataclass(frozen=True, repr=False, slots=True)
class NotIn(Matcher):
    """Present and equal to none of the listed values (an allow-list)."""

    values: tuple[Scalar, ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "values", _literal_list(self.values, "not_in"))

    def _match_present(self, value: Any) -> bool:
        return not any(_same(value, item) for item in self.values)

    def describe(self, subject: str) -> str:
        return f"{subject} not in {list(self.values)!r}"

    def __repr__(self) -> str:
        return f"not_in({list(self.values)!r})"


@dataclass(frozen=True, repr=False, slots=True)
class Not(Matcher):
    """Negation; unknown stays unknown."""

    inner: Matcher

    def match(self, value: Any) -> bool | None:
        inner = self.inner.match(value)
        return None if inner is None else not inner

    def _match_present(self, value: Any) -> bool | None:  # pragma: no cover - match overrides
        return self.match(value)

    def describe(self, subject: str) -> str:
        return f"not ({self.inner.describe(subject)})"

    def __repr__(self) -> str:
        return f"not_({self.inner!r})"


def _literal_repr(literal: Any) -> str:
    return repr(list(literal)) if isinstance(literal, tuple) else repr(literal)


def compared_literals(matcher: Matcher) -> tuple[Any, ...]:
    """The literals ``matcher`` compares a value with for equality (a bare literal,
    ``one_of``, ``not_in``, through ``not_``); none for a pattern."""
    if isinstance(matcher, Not):
        return compared_literals(matcher.inner)
    if isinstance(matcher, Equals):
        return (matcher.literal,)
    if isinstance(matcher, (OneOf, NotIn)):
        return matcher.values
    return ()


def as_matcher(value: Any) -> Matcher:
    """A matcher as is; a bare literal (or list of literals) as equality."""
    if isinstance(value, Matcher):
        return value
    if value is None:
        raise TypeError("None cannot be matched: a missing value is always unknown")
    if isinstance(value, (list, tuple)):
        return Equals(_literal_list(value, "a list literal"))
    _check_scalar(value, "a bare literal")
    return Equals(value)


# A policy's empty pattern is a slip, not a meaning: it matches everything (a probe is met
# on every run) or nothing (an attack is never seen). The matchers themselves take any
# pattern; an allow-list may be empty (``not_in([])``: every value is outside it).


def regex(pattern: str) -> Matcher:
    """Matches when the RE2 ``pattern`` is found anywhere in the text (linear time)."""
    if pattern == "":
        raise ValueError("regex() needs a non-empty pattern: '' matches everything")
    return Regex(pattern)


def glob(pattern: str) -> Matcher:
    """Matches the whole text against a shell-style pattern, case-sensitively."""
    if pattern == "":
        raise ValueError("glob() needs a non-empty pattern: '' matches only ''")
    return Glob(pattern)


def contains(item: Scalar) -> Matcher:
    """Substring for strings, membership for lists, key membership for mappings."""
    if item == "":
        raise ValueError("contains() needs a non-empty string: '' is in every text")
    return Contains(item)


def one_of(values: list[Scalar] | tuple[Scalar, ...]) -> Matcher:
    """Equal to one of ``values``."""
    if isinstance(values, (list, tuple)) and not values:
        raise ValueError("one_of() needs at least one value: one_of([]) matches nothing")
    return OneOf(tuple(values) if isinstance(values, list) else values)


def not_in(values: list[Scalar] | tuple[Scalar, ...]) -> Matcher:
    """Present and equal to none of ``values``; a missing value is unknown."""
    return NotIn(tuple(values) if isinstance(values, list) else values)


def not_(matcher: Matcher | Scalar) -> Matcher:
    """Negates a matcher (or a literal's equality); unknown stays unknown."""
    return Not(as_matcher(matcher))


def any_match(matcher: Matcher, values: Iterable[Any]) -> bool | None:
    """Kleene OR of ``matcher`` over ``values``: True once one matches, else unknown if one
    is unknown, else False."""
    result: bool | None = False
    for value in values:
        answer = matcher.match(value)
        if answer is True:
            return True
        if answer is None:
            result = None
    return result


def all_match(matchers: dict[str, Matcher], values: Any) -> bool | None:
    """Kleene AND of ``key -> matcher`` over a mapping; missing keys are unknown; a value
    parsers read differently (``model.Ambiguous``) matches when any reading does."""
    result: bool | None = True
    for key, matcher in matchers.items():
        value = values.get(key, MISSING) if isinstance(values, dict) else MISSING
        if isinstance(value, Ambiguous):  # any reading that matches, matches
            answers = [matcher.match(reading) for reading in value.readings]
            answer = True if True in answers else (None if None in answers else False)
        else:
            answer = matcher.match(value)
        if answer is False:
            return False
        if answer is None:
            result = None
    return result


# --- addresses and paths ---------------------------------------------------------------------

# Named address ranges ``ip_in`` takes besides CIDR blocks. ``metadata``: the cloud instance
# metadata services (AWS, GCP, Azure, OpenStack, Oracle, DigitalOcean on 169.254.169.254;
# Alibaba's 100.100.100.200; AWS's IPv6 fd00:ec2::254) and their well-known names.
IP_RANGES: Final[dict[str, tuple[str, ...]]] = {
    "loopback": ("127.0.0.0/8", "::1/128"),
    "private": ("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "100.64.0.0/10", "fc00::/7"),
    "link_local": ("169.254.0.0/16", "fe80::/10"),
    "metadata": ("169.254.169.254/32", "100.100.100.200/32", "fd00:ec2::254/128"),
    "unspecified": ("0.0.0.0/8", "::/128"),
}
_RANGE_NAMES: Final[dict[str, tuple[str, ...]]] = {
    "loopback": ("localhost",),
    "metadata": ("metadata.google.internal", "metadata.goog", "metadata"),
}


def _address(host: str) -> Any:
    """The IP address a host text is a literal of (``[::1]``, ``127.1``, ``0x7f.0.0.1``,
    ``2130706433`` included: the forms an HTTP client resolves without DNS), or None."""
    import ipaddress
    import socket

    text = host.strip().lower().removeprefix("[").removesuffix("]").split("%", 1)[0]
    try:
        address = ipaddress.ip_address(text)
    except ValueError:
        try:  # inet_aton reads the short, octal and hex IPv4 forms curl and requests accept
            address = ipaddress.ip_address(socket.inet_aton(text))
        except (OSError, ValueError):
            return None
    mapped = getattr(address, "ipv4_mapped", None)
    return mapped or address


@dataclass(frozen=True, repr=False, slots=True)
class IpIn(Matcher):
    """A host that is an IP literal (or a well-known name such as ``localhost``) inside one of
    the ranges; a DNS name is not an address and does not match. ``exempt``: hosts never
    counted (the policy's allow-list)."""

    ranges: tuple[str, ...]
    exempt: tuple[str, ...] = ()
    networks: tuple[Any, ...] = field(init=False, compare=False, repr=False)
    names: frozenset[str] = field(init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        import ipaddress

        ranges = _literal_list(self.ranges, "ip_in")
        networks: list[Any] = []
        known: set[str] = set()
        for item in ranges:
            if not isinstance(item, str):
                raise TypeError("each range of ip_in() must be a string")
            if item in IP_RANGES:
                networks += [ipaddress.ip_network(block) for block in IP_RANGES[item]]
                known.update(_RANGE_NAMES.get(item, ()))
                continue
            try:
                networks.append(ipaddress.ip_network(item, strict=False))
            except ValueError:
                from rampart_otel.vocabulary import unknown

                raise ValueError(
                    unknown("address range", item, tuple(IP_RANGES)) + " (or a CIDR block)"
                ) from None
        exempt = _literal_list(self.exempt, "ip_in")
        object.__setattr__(self, "ranges", ranges)
        object.__setattr__(self, "exempt", tuple(str(host).lower() for host in exempt))
        object.__setattr__(self, "networks", tuple(networks))
        object.__setattr__(self, "names", frozenset(known))

    def _match_present(self, value: Any) -> bool | None:
        if not isinstance(value, str):
            return False
        host = value.strip().lower().rstrip(".")
        if host in self.exempt:
            return False
        if host in self.names or any(host.endswith("." + name) for name in self.names):
            return True
        address = _address(host)
        if address is None:
            return False
        exempt = {_address(other) for other in self.exempt} - {None}
        if address in exempt:
            return False
        return any(address.version == net.version and address in net for net in self.networks)

    def describe(self, subject: str) -> str:
        text = f"{subject} is an address in {', '.join(self.ranges)}"
        return text + (f" (except {list(self.exempt)!r})" if self.exempt else "")

    def __repr__(self) -> str:
        exempt = f", {list(self.exempt)!r}" if self.exempt else ""
        return f"ip_in({list(self.ranges)!r}{exempt})"


@dataclass(frozen=True, repr=False, slots=True)
class PathUnder(Matcher):
    """An absolute path inside ``root`` once ``.`` and ``..`` are resolved: True inside, False
    outside; a relative path is unknown (the directory it is relative to is not recorded)."""

    root: str

    def __post_init__(self) -> None:
        import posixpath

        if not isinstance(self.root, str) or not self.root.startswith("/") or "\0" in self.root:
            raise ValueError(
                f"path_under() takes an absolute path such as '/srv/app', not {self.root!r}"
            )
        object.__setattr__(self, "root", posixpath.normpath(self.root))

    def _match_present(self, value: Any) -> bool | None:
        import posixpath

        if not isinstance(value, str):
            return None
        text = value.strip()
        if text.startswith("file://"):
            text = text[len("file://") :]
        if text.startswith("~") or not text.startswith("/"):
            return None
        path = posixpath.normpath(text)
        return path == self.root or path.startswith(self.root.rstrip("/") + "/")

    def describe(self, subject: str) -> str:
        return f"{subject} is a path under {self.root!r}"

    def __repr__(self) -> str:
        return f"path_under({self.root!r})"


def address_range(host: str) -> str | None:
    """The first named range of ``IP_RANGES`` the host is an address in (``localhost`` is
    ``loopback``), or None: for a reviewer of an allow-list."""
    for name in IP_RANGES:
        if IpIn((name,)).match(host):
            return name
    return None


def ip_in(ranges: list[str] | tuple[str, ...], exempt: list[str] | tuple[str, ...] = ()) -> Matcher:
    """A host that is an IP address in one of ``ranges`` (CIDR blocks or the names of
    ``IP_RANGES``), other than the ``exempt`` hosts."""
    if isinstance(ranges, (list, tuple)) and not ranges:
        raise ValueError("ip_in() needs at least one range: ip_in([]) matches nothing")
    return IpIn(tuple(ranges), tuple(exempt))


def path_under(root: str) -> Matcher:
    """An absolute path inside ``root``; a relative path is unknown."""
    return PathUnder(root)


# --- secrets ---------------------------------------------------------------------------------


@dataclass(frozen=True, repr=False, slots=True)
class Secret(Matcher):
    """A text holding a credential by ``secret_values``' table of token formats (AWS keys,
    private keys, JWTs, GitHub/GitLab/Slack/Stripe/OpenAI/Anthropic/Google tokens, bearer
    tokens, URL passwords, secret-named assignments); ``detectors``: only these rows."""

    detectors: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        from rampart_otel.secret_values import DETECTORS
        from rampart_otel.vocabulary import unknown

        chosen = _literal_list(self.detectors, "secret")
        known = tuple(detector.name for detector in DETECTORS)
        for name in chosen:
            if name not in known:
                raise ValueError(unknown("secret detector", str(name), known))
        object.__setattr__(self, "detectors", chosen)

    def findings(self, text: str) -> list[Any]:
        """The secrets in ``text`` this matcher counts (``secret_values.SecretFinding``)."""
        from rampart_otel.secret_values import find_secrets

        return [
            finding
            for finding in find_secrets(text)
            if not self.detectors or finding.detector in self.detectors
        ]

    def _match_present(self, value: Any) -> bool:
        return any(self.findings(text) for text in _texts(value))

    def describe(self, subject: str) -> str:
        which = ", ".join(self.detectors) if self.detectors else "any known format"
        return f"{subject} holds a secret ({which})"

    def __repr__(self) -> str:
        return f"secret({list(self.detectors)!r})" if self.detectors else "secret()"


def secret(detectors: list[str] | tuple[str, ...] | None = None) -> Matcher:
    """A text holding a credential (``secret_values``' detectors, or only ``detectors``)."""
    if detectors is None:
        return Secret(())
    if isinstance(detectors, (list, tuple)) and not detectors:
        raise ValueError("secret([]) names no detector: write secret() for every detector")
    return Secret(tuple(detectors))


def uses_secret(value: Any, depth: int = 0) -> bool:
    """Whether an evaluator or matcher tree holds a ``secret()`` matcher anywhere."""
    import dataclasses

    if isinstance(value, Secret):
        return True
    if depth > 64:
        return False
    if isinstance(value, (list, tuple)):
        return any(uses_secret(item, depth + 1) for item in value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return any(
            uses_secret(getattr(value, part.name, None), depth + 1)
            for part in dataclasses.fields(value)
        )
    return False
