"""The `[mcp]` table of the config file: where the server listens and what it exposes.

    [mcp]
    host = "127.0.0.1"          # loopback by default; another address needs `token`
    port = 60606                # taken? the next free one up to +20 is used
    tools = ["search", "read"]  # allowlist; default: every tool
    read_only = false           # true hides the state-changing tools (index_library)
    token = "..."               # bearer token; LINKLY_MCP_TOKEN wins over this
    allowed_origins = ["https://my.app"]   # browser origins allowed besides loopback
    allowed_hosts = ["nas.local:*"]        # Host headers allowed besides loopback
    max_request_bytes = 1048576
    max_response_chars = 200000
"""

from __future__ import annotations

import ipaddress
import logging
import os
from dataclasses import dataclass, field, replace

from linkly_ls.core.config import Config, ConfigError, readable_by_others, refuse_unknown_keys
from linkly_ls.core.tools.registry import REGISTRY, ToolRegistry

log = logging.getLogger("linkly_ls.mcp")

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 60606
DEFAULT_MAX_REQUEST_BYTES = 1 << 20
DEFAULT_MAX_RESPONSE_CHARS = 200_000
TOKEN_ENVIRONMENT_VARIABLE = "LINKLY_MCP_TOKEN"

_KNOWN_KEYS = {
    "host",
    "port",
    "tools",
    "read_only",
    "token",
    "allowed_origins",
    "allowed_hosts",
    "max_request_bytes",
    "max_response_chars",
}
_LOOPBACK_NAMES = {"localhost", "localhost.localdomain", "ip6-localhost"}


@dataclass(frozen=True)
class McpSettings:
    host: str = DEFAULT_HOST
    port: int = DEFAULT_PORT
    #: the allowlist; default: every registered tool
    tools: tuple[str, ...] = field(default_factory=REGISTRY.names)
    read_only: bool = False
    token: str | None = None
    allowed_origins: tuple[str, ...] = ()
    allowed_hosts: tuple[str, ...] = ()
    max_request_bytes: int = DEFAULT_MAX_REQUEST_BYTES
    max_response_chars: int = DEFAULT_MAX_RESPONSE_CHARS
    #: where the settings came from, for error messages
    source: str = field(default="[mcp]", compare=False)

    def exposed_tools(self, registry: ToolRegistry = REGISTRY) -> list[str]:
        """The allowlist minus the tools that write when read-only, in the registry's order."""
        return [
            tool.name for tool in registry if tool.name in self.tools and not (self.read_only and tool.writes)
        ]

    def with_address(self, host: str | None = None, port: int | None = None) -> McpSettings:
        """These settings with a command-line host or port in place of the configured one."""
        return replace(self, host=host or self.host, port=self.port if port is None else _port(port, "--port"))

    @property
    def is_loopback(self) -> bool:
        return is_loopback_host(self.host)


def is_loopback_host(host: str) -> bool:
    name = host.strip("[]").lower()
    if name in _LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def check_mcp_keys(config: Config) -> None:
    """The keys of `[mcp]`, checked by every command (its values when a server starts)."""
    refuse_unknown_keys(config.section("mcp"), _KNOWN_KEYS, f"{config.source}: [mcp]" if config.source else "[mcp]")


def load_mcp_settings(config: Config) -> McpSettings:
    """Read and check `[mcp]`; a wrong value raises ConfigError naming the key."""
    check_mcp_keys(config)
    section = config.section("mcp")
    where = f"{config.source}: [mcp]" if config.source else "[mcp]"
    tools = _string_list(section.get("tools", list(REGISTRY.names())), "tools", where)
    unknown_tools = [name for name in tools if name not in REGISTRY]
    if unknown_tools:
        raise ConfigError(
            f"{where}: tools lists unknown tool(s) {', '.join(unknown_tools)}; tools: {', '.join(REGISTRY.names())}"
        )
    read_only = section.get("read_only", False)
    if not isinstance(read_only, bool):
        raise ConfigError(f"{where}: read_only must be true or false, got {read_only!r}")
    from_environment = os.environ.get(TOKEN_ENVIRONMENT_VARIABLE)
    token = from_environment or section.get("token")
    if token is not None and (not isinstance(token, str) or len(token.strip()) < 16):
        named = f"the {TOKEN_ENVIRONMENT_VARIABLE} environment variable" if from_environment else f"{where}: token"
        raise ConfigError(f"{named} must be a string of at least 16 characters (e.g. `openssl rand -hex 32`)")
    if token is not None and not from_environment and readable_by_others(config.source):
        log.warning(
            "%s: the token is written in %s, which other users can read; move it to the %s environment variable "
            "or run `chmod 600 %s`", where, config.source, TOKEN_ENVIRONMENT_VARIABLE, config.source,
        )
    host = section.get("host", DEFAULT_HOST)
    if not isinstance(host, str) or not host.strip():
        raise ConfigError(f"{where}: host must be an address such as \"127.0.0.1\", got {host!r}")
    return McpSettings(
        host=host.strip(),
        port=_port(section.get("port", DEFAULT_PORT), f"{where}: port"),
        tools=tuple(tools),
        read_only=read_only,
        token=token.strip() if token else None,
        allowed_origins=tuple(_string_list(section.get("allowed_origins", []), "allowed_origins", where)),
        allowed_hosts=tuple(_string_list(section.get("allowed_hosts", []), "allowed_hosts", where)),
        max_request_bytes=_positive(
            section.get("max_request_bytes", DEFAULT_MAX_REQUEST_BYTES), "max_request_bytes", where
        ),
        max_response_chars=_positive(
            section.get("max_response_chars", DEFAULT_MAX_RESPONSE_CHARS), "max_response_chars", where, minimum=1000
        ),
        source=where,
    )


def _port(value: object, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 65535:
        raise ConfigError(f"{what} must be a port number from 1 to 65535, got {value!r}")
    return value


def _positive(value: object, key: str, where: str, minimum: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ConfigError(f"{where}: {key} must be an integer of at least {minimum}, got {value!r}")
    return value


def _string_list(value: object, key: str, where: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(item, str) and item for item in value):
        raise ConfigError(f"{where}: {key} must be a list of strings")
    return list(value)
