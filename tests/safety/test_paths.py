"""PathGuard: nothing outside the allowed roots; the demo code search uses it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import toolwire
from toolwire import CallerError, PathGuard, PathNotAllowedError, ToolStatus
from toolwire.demo import tools as demo
from toolwire.messages import ToolResult
from toolwire.testing import ScriptedModel, text_turn, tool_call_turn


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """root/ (allowed) with a file, a link out, a link in; secret.txt beside root."""
    root = tmp_path / "root"
    (root / "sub").mkdir(parents=True)
    (root / "sub" / "a.txt").write_text("a")
    (tmp_path / "secret.txt").write_text("secret")
    os.symlink(tmp_path / "secret.txt", root / "link-out")
    os.symlink(tmp_path, root / "dir-out")
    os.symlink(root / "sub" / "a.txt", root / "link-in")
    return root


def test_paths_inside_are_resolved(tree: Path) -> None:
    guard = PathGuard(tree)
    assert guard.resolve("sub/a.txt") == (tree / "sub" / "a.txt").resolve()
    assert guard.resolve("sub/../sub/a.txt") == (tree / "sub" / "a.txt").resolve()
    assert guard.resolve("link-in") == (tree / "sub" / "a.txt").resolve()
    assert guard.resolve(".") == tree.resolve()
    assert guard.resolve(str(tree / "sub")) == (tree / "sub").resolve()  # absolute, inside
    assert guard.relative(guard.resolve("sub/a.txt")) == "sub/a.txt"
    assert guard.resolve("sub/new.txt").name == "new.txt"  # need not exist yet


@pytest.mark.parametrize(
    "path",
    [
        "..",
        "../secret.txt",
        "sub/../../secret.txt",
        "/etc/passwd",
        "link-out",
        "dir-out/secret.txt",
        "a\0b",
        "notes/\ud800.txt",  # a lone surrogate: no file can have this name
        "x" * 256,  # longer than NAME_MAX
        "sub/" + "y" * 300 + "/a.txt",
        "/".join(["z" * 200] * 25),  # longer than PATH_MAX
    ],
)
def test_paths_outside_are_refused_without_naming_the_host(tree: Path, path: str) -> None:
    guard = PathGuard(tree)
    with pytest.raises(PathNotAllowedError) as caught:
        guard.resolve(path)
    assert caught.value.fault == "model"
    assert str(tree.parent) not in str(caught.value)
    assert not guard.allows(path)


def test_several_roots(tree: Path, tmp_path: Path) -> None:
    other = tmp_path / "other"
    other.mkdir()
    guard = PathGuard([tree, other])
    assert guard.allows(other / "x") and guard.allows("sub") and not guard.allows(tmp_path)


def test_bad_roots(tmp_path: Path) -> None:
    for roots in ([], [tmp_path / "missing"], [3]):
        with pytest.raises(CallerError):
            PathGuard(roots)  # type: ignore[arg-type]


@settings(max_examples=200)
@given(
    st.lists(
        st.sampled_from(["..", ".", "sub", "a.txt", "link-out", "dir-out", "/", "x"]), max_size=6
    )
)
def test_whatever_is_allowed_lies_inside(parts: list[str]) -> None:
    root = Path(__file__).parent  # any real directory: the property is about resolution
    guard = PathGuard(root)
    path = "/".join(parts)
    if guard.allows(path):
        assert Path(os.path.realpath(os.path.join(root, path))).is_relative_to(root.resolve())


def test_the_demo_code_search_is_confined_to_its_project() -> None:
    install = str(demo.demo_project().parent)
    model = ScriptedModel(
        [
            tool_call_turn(
                ("explore_code", {"query": "login", "path": "auth"}),
                ("explore_code", {"query": "root", "path": "../../.."}),
                ("explore_code", {"query": "root", "path": "/etc"}),
                ("explore_code", {"query": "x", "path": "nowhere"}),
            ),
            text_turn("done"),
        ]
    )
    result = toolwire.Agent(model, demo.DEMO_TOOLS).run_sync("search")
    inside, up, absolute, missing = [m for m in result.messages if isinstance(m, ToolResult)]
    assert inside.status is ToolStatus.OK and "login.py" in inside.content
    for refused in (up, absolute):
        assert refused.status is ToolStatus.ERROR
        assert "outside the directories this tool may use" in refused.content
    assert missing.status is ToolStatus.ERROR and "'nowhere'" in missing.content
    for each in (up, absolute, missing):
        assert install not in each.content and "site-packages" not in each.content


def test_the_demo_code_search_skips_links_out_of_its_project(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "ok.py").write_text("needle = 1\n")
    (tmp_path / "outside.py").write_text("needle = 'secret'\n")
    os.symlink(tmp_path / "outside.py", project / "leak.py")
    monkeypatch.setattr(demo, "demo_project", lambda: project)
    found = demo.explore_code.invoke({"query": "needle", "path": "", "max_results": 20})
    assert found == "ok.py:1: needle = 1"


def test_a_name_max_component_is_still_allowed(tree: Path) -> None:
    guard = PathGuard(tree)
    assert guard.resolve("n" * guard.name_max).name == "n" * guard.name_max


def test_os_errors_name_files_relative_to_the_root(tree: Path) -> None:
    guard = PathGuard(tree)
    try:
        (tree / "sub" / "gone.txt").read_text()
    except OSError as exc:
        hidden = guard.hide_roots(exc)
    assert isinstance(hidden, FileNotFoundError)
    assert str(hidden).endswith("'sub/gone.txt'") and str(tree) not in str(hidden)
    outside = guard.hide_roots(PermissionError(13, "Permission denied", "/etc/shadow"))
    assert str(outside).endswith("'shadow'")
    plain = FileNotFoundError("no such directory in the project: 'x'")
    assert guard.hide_roots(plain) is plain


def test_the_demo_code_search_refuses_an_over_long_name_without_the_install_path() -> None:
    install = str(demo.demo_project().parent)
    model = ScriptedModel(
        [
            tool_call_turn(
                ("explore_code", {"query": "x", "path": "a" * 300}),
                ("explore_code", {"query": "x", "path": "auth/\ud800"}),
            ),
            text_turn("done"),
        ]
    )
    result = toolwire.Agent(model, demo.DEMO_TOOLS).run_sync("search")
    long, surrogate = [m for m in result.messages if isinstance(m, ToolResult)]
    assert long.status is ToolStatus.ERROR and "bytes long; the most is" in long.content
    assert surrogate.status is ToolStatus.ERROR and "not a valid file name" in surrogate.content
    for each in (long, surrogate):
        assert install not in each.content and "site-packages" not in each.content
