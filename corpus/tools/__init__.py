"""The agent's tools: one `Tool` class per tool, listed once in `registry.TOOLS`, run by `ToolBox`.

Import from here: `ToolBox`, `ToolResult`, `default_schemas`, `validate_arguments`, `paginate`,
the toolbox defaults, and the registry's questions about a call's tool (`tool_named`,
`is_read`, `is_final`, `is_search`, `search_query`).
"""

from hopforge.corpus.tools.base import Tool, ToolResult, ToolSettings, normalize_text
from hopforge.corpus.tools.registry import (
    EMPTY_TEXTS,
    FAULTABLE_TOOLS,
    READ_TOOLS,
    TOOLS,
    is_final,
    is_read,
    is_search,
    search_query,
    tool_named,
    tools,
)
from hopforge.corpus.tools.toolbox import (
    DEFAULT_K,
    MAX_K,
    PAGE_CHARS,
    SEARCH_MODE,
    ToolBox,
    default_schemas,
    paginate,
    validate_arguments,
)

__all__ = [
    "DEFAULT_K", "EMPTY_TEXTS", "FAULTABLE_TOOLS", "MAX_K", "PAGE_CHARS", "READ_TOOLS",
    "SEARCH_MODE", "TOOLS", "Tool", "ToolBox", "ToolResult", "ToolSettings", "default_schemas",
    "is_final", "is_read", "is_search", "normalize_text", "paginate", "search_query",
    "tool_named", "tools", "validate_arguments",
]
