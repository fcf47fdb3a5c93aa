"""The `[[remote]]` tables: other machines' `linkly serve` that this one may search.

    [[remote]]
    name = "desktop"                          # used in ids (desktop:3f2a9c01b7de) and cloud:///desktop/...
    url = "https://desktop.example.org/mcp"   # the other server's MCP endpoint
    token_env = "LINKLY_DESKTOP_TOKEN"        # the environment variable holding its bearer token
    description = "Book collection"           # optional
    timeout_s = 5                             # optional: seconds a call may take
    # allow_insecure = true                   # plain http:// to a host that is not loopback
    # token = "..."                           # the token itself; warned about when others can read the file

A token lives in the environment, not in the file, unless the user insists
(`token`). An `https://` URL is verified normally; `http://` carries the token
in clear text, so it is accepted for loopback only, or with `allow_insecure`.
"""

from __future__ import annotations

import ipaddress
import logging
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from linkly_ls.core.config import Config, ConfigError, readable_by_others, refuse_unknown_keys

log = logging.getLogger("linkly_ls.remote")

REMOTE_NAME_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,31}$")
#: names that would read as something else in a library value or an id
RESERVED_NAMES = {"local", "cloud"}
DEFAULT_TIMEOUT_S = 5.0
_KNOWN_KEYS = {"name", "url", "token_env", "token", "description", "timeout_s", "allow_insecure"}


@dataclass(frozen=True)
class RemoteConfig:
    name: str
    url: str
    description: str = ""
    timeout_s: float = DEFAULT_TIMEOUT_S
    #: the environment variable the token is read from (when set), for messages
    token_env: str | None = None
    #: the bearer token; never shown (repr=False) and never logged
    token: str | None = field(default=None, repr=False)
    #: why no token could be found (an environment variable that is not set), reported on every call
    token_problem: str | None = None


def is_loopback_host(host: str) -> bool:
    name = host.strip("[]").lower()
    if name in ("localhost", "localhost.localdomain", "ip6-localhost"):
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def load_remotes(config: Config) -> list[RemoteConfig]:
    """Read and check every `[[remote]]`; a wrong value raises ConfigError naming the table and key."""
    entries = config.raw.get("remote", [])
    where = str(config.source) if config.source else "config"
    if not isinstance(entries, list):
        raise ConfigError(f"{where}: [[remote]] must be an array of tables")
    remotes: list[RemoteConfig] = []
    for entry in entries:
        if not isinstance(entry, dict):
            raise ConfigError(f"{where}: each [[remote]] must be a table")
        remote = _parse_remote(entry, where, config.source)
        if any(other.name == remote.name for other in remotes):
            raise ConfigError(f"{where}: remote {remote.name!r} is defined twice")
        remotes.append(remote)
    return remotes


def check_remote_keys(config: Config) -> None:
    """The keys of every `[[remote]]`, checked by every command (the rest when a remote is used): a typo
    such as `tokn = ...` must not run on the default it meant to change."""
    entries = config.raw.get("remote", [])
    where = str(config.source) if config.source else "config"
    for entry in entries if isinstance(entries, list) else []:
        if isinstance(entry, dict):
            refuse_unknown_keys(entry, _KNOWN_KEYS, f"{where}: remote {entry.get('name')!r}")


def validate_remote_name(name: object, where: str = "config") -> str:
    if name is None:
        raise ConfigError(f'{where}: a [[remote]] needs a name = "..." (1-32 letters, digits, \'_\' or \'-\')')
    if not isinstance(name, str) or not REMOTE_NAME_PATTERN.match(name) or name.lower() in RESERVED_NAMES:
        raise ConfigError(
            f"{where}: remote name {name!r} is not valid: use 1-32 letters, digits, '_' or '-', starting with a "
            f"letter or digit (not {' or '.join(sorted(RESERVED_NAMES))})"
        )
    return name


def _parse_remote(entry: dict, where: str, source: Path | None) -> RemoteConfig:
    name = validate_remote_name(entry.get("name"), where)
    here = f"{where}: remote {name!r}"
    refuse_unknown_keys(entry, _KNOWN_KEYS, here)
    allow_insecure = entry.get("allow_insecure", False)
    if not isinstance(allow_insecure, bool):
        raise ConfigError(f"{here}: allow_insecure must be true or false")
    url = _check_url(entry.get("url"), allow_insecure, here)
    timeout = entry.get("timeout_s", DEFAULT_TIMEOUT_S)
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or not 0 < timeout <= 300:
        raise ConfigError(f"{here}: timeout_s must be a number of seconds above 0, at most 300, got {timeout!r}")
    description = entry.get("description", "")
    if not isinstance(description, str):
        raise ConfigError(f"{here}: description must be a string")
    token, token_env, problem = _token(entry, here, source)
    return RemoteConfig(
        name=name,
        url=url,
        description=description,
        timeout_s=float(timeout),
        token_env=token_env,
        token=token,
        token_problem=problem,
    )


def _check_url(url: object, allow_insecure: bool, here: str) -> str:
    if not isinstance(url, str) or not url.strip():
        raise ConfigError(f"{here}: url is required, e.g. url = \"https://desktop.example.org/mcp\"")
    parts = urlsplit(url.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConfigError(f"{here}: url must be an http:// or https:// address of a linkly server's /mcp endpoint")
    if parts.username or parts.password:
        raise ConfigError(f"{here}: url must not hold a user or password; put the token in token_env")
    if parts.scheme == "http" and not is_loopback_host(parts.hostname) and not allow_insecure:
        raise ConfigError(
            f"{here}: {parts.scheme}://{parts.hostname} would send the token in clear text; use https:// (a "
            "reverse proxy with TLS, or an SSH tunnel to a loopback address), or set allow_insecure = true"
        )
    return url.strip()


def _token(entry: dict, here: str, source: Path | None) -> tuple[str | None, str | None, str | None]:
    """(token, the variable it comes from, why there is none)."""
    token_env = entry.get("token_env")
    inline = entry.get("token")
    if token_env is not None and (not isinstance(token_env, str) or not token_env.strip()):
        raise ConfigError(f"{here}: token_env must name an environment variable")
    if inline is not None and (not isinstance(inline, str) or not inline.strip()):
        raise ConfigError(f"{here}: token must be a non-empty string")
    if token_env:
        value = os.environ.get(token_env.strip(), "").strip()
        if value:
            return value, token_env.strip(), None
        if inline is None:
            return None, token_env.strip(), f"the environment variable {token_env.strip()} (token_env) is not set"
    if inline is not None:
        _warn_if_readable(source, here)
        return inline.strip(), None, None
    return None, None, None


def _warn_if_readable(source: Path | None, here: str) -> None:
    if readable_by_others(source):
        log.warning(
            "%s: the token is written in %s, which other users can read; move it to an environment variable "
            "(token_env) or run `chmod 600 %s`",
            here,
            source,
            source,
        )
