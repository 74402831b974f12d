"""The demo tools: a code search and a weather lookup.

Both are read-only and safe to run in parallel, so the executor batches them; both
work offline on data bundled with the package. The code search is confined to its
project by a :class:`~toolwire.safety.PathGuard`: a ``path`` with ``..``, an absolute
path or a link leading out is refused, and no message names the install directory.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import Literal

from ..safety.paths import PathGuard
from ..tools import tool

__all__ = ["DEMO_TOOLS", "explore_code", "get_weather"]

# Today's and tomorrow's weather for a few cities (a bundled table; no network).
WEATHER = {
    "beijing": {
        "today": "Sunny, 3°C to 12°C, north wind 3-4",
        "tomorrow": "Cloudy, 1°C to 9°C, light haze",
    },
    "shanghai": {
        "today": "Light rain, 10°C to 15°C",
        "tomorrow": "Overcast, 11°C to 17°C, east wind 2",
    },
    "shenzhen": {"today": "Sunny, 18°C to 25°C", "tomorrow": "Showers, 19°C to 24°C"},
    "hangzhou": {"today": "Cloudy, 8°C to 14°C", "tomorrow": "Light rain, 9°C to 13°C"},
}


def demo_project() -> Path:
    """The small source tree ``explore_code`` searches by default."""
    return Path(str(resources.files(__package__).joinpath("project")))


@tool(concurrency_safe=True, side_effects=False, idempotent=True, timeout=10)
def explore_code(query: str, path: str = "", max_results: int = 20) -> str:
    """Search the source code for a keyword, like grep, and return the matching lines.

    Args:
        query: The text to look for (case-insensitive).
        path: Directory to search, relative to the bundled demo project (empty: all of it).
        max_results: The most matching lines to return.
    """
    guard = PathGuard(demo_project())
    root = guard.resolve(path or ".")
    try:
        return _search(guard, root, path, query, max_results)
    except OSError as exc:  # a file the search could not read: named within the project
        raise guard.hide_roots(exc) from None


def _search(guard: PathGuard, root: Path, path: str, query: str, max_results: int) -> str:
    needle = query.lower()
    if not root.is_dir():
        raise FileNotFoundError(f"no such directory in the project: {path!r}")
    hits: list[str] = []
    for file in sorted(root.rglob("*.py")):
        if not guard.allows(file):
            continue  # a link inside the project that leads out of it
        for number, line in enumerate(
            file.read_text(encoding="utf-8", errors="replace").splitlines(), 1
        ):
            if needle in line.lower():
                hits.append(f"{file.relative_to(root)}:{number}: {line.strip()}")
                if len(hits) >= max_results:
                    return "\n".join(hits)
    return "\n".join(hits) if hits else f"no match for {query!r}"


# The bundled table covers these cities; the schema says so, so a model (and a
# grammar built from the schema) can only ask for one of them.
City = Literal["Beijing", "Shanghai", "Shenzhen", "Hangzhou"]


@tool(concurrency_safe=True, side_effects=False, idempotent=True, timeout=10)
def get_weather(city: City, day: Literal["today", "tomorrow"] = "today") -> str:
    """Look up the weather forecast for a city.

    Args:
        city: The city.
        day: Which day: today or tomorrow.
    """
    forecast = WEATHER.get(city.strip().lower())
    if forecast is None:
        known = ", ".join(name.title() for name in WEATHER)
        raise LookupError(f"no forecast for {city!r}; known cities: {known}")
    return f"{city.strip().title()} {day}: {forecast[day]}"


DEMO_TOOLS = [explore_code, get_weather]
