"""The table of tool-call format families, and model-id resolution.

Everything that decides which parser a model gets lives here, as data (h11 keeps its
state machine in one table the same way): :data:`FAMILIES` lists each family's module,
variants (the first is the default) and the generation prompt each variant's chat
template appends when the caller gives none; :data:`MODEL_RULES` maps Hugging Face model ids to a
(family, variant), first match wins, so specific rules (``qwen3-coder``) come before
general ones (``qwen3``).

A model id is normalised before matching: lower-cased, with the organisation (or any
path) dropped, so ``"Qwen/Qwen3-8B"``, ``"qwen3-8b"`` and ``"/models/Qwen3-8B-AWQ"``
resolve alike. Family modules are imported only when first used, so importing
``toolwire.formats`` stays cheap; each module ``toolwire.formats.<module>`` exposes
``make(variant, *, tools, generation_prompt) -> Format``. A family reads its variants
and default prompts from here (:class:`~toolwire.formats.base.Format` checks the
variant), never from a copy of its own.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..errors import CallerError
from ..tooldef import ToolDef

if TYPE_CHECKING:
    from .base import Format

__all__ = [
    "FAMILIES",
    "MODEL_RULES",
    "FamilyInfo",
    "ModelRule",
    "family_info",
    "make_format",
    "normalize_model_id",
    "resolve_model",
]


@dataclass(frozen=True, slots=True)
class FamilyInfo:
    """One format family.

    Attributes:
        name: The family name (``toolwire.formats.get(name)``).
        module: The module under ``toolwire.formats`` that implements it.
        variants: The variants it supports; the first is the default.
        description: One line for ``toolwire formats``.
        prompts: The generation prompt each variant's official chat template appends
            (``add_generation_prompt=True``), assumed when the caller passes none; a
            variant absent here needs none (its output starts the same either way).
    """

    name: str
    module: str
    variants: tuple[str, ...]
    description: str
    prompts: Mapping[str, str] = field(default_factory=dict)

    @property
    def default_variant(self) -> str:
        """The variant used when none is given."""
        return self.variants[0]

    def check_variant(self, variant: str) -> None:
        """Raise :class:`CallerError` unless ``variant`` is one of :attr:`variants`."""
        if variant not in self.variants:
            raise CallerError(
                f"unknown variant {variant!r} of format family {self.name!r}; "
                f"known variants: {', '.join(self.variants)}"
            )

    def default_prompt(self, variant: str) -> str | None:
        """The generation prompt assumed for ``variant`` (``None``: it needs none)."""
        return self.prompts.get(variant)

    @property
    def model_patterns(self) -> tuple[str, ...]:
        """The model-id patterns (regular expressions) that select this family."""
        return tuple(rule.pattern for rule in MODEL_RULES if rule.family == self.name)


@dataclass(frozen=True, slots=True)
class ModelRule:
    """Model ids matching ``pattern`` (searched in the normalised id) use this format.

    Attributes:
        pattern: A regular expression, searched in the lower-cased id without its org.
        family: The family name.
        variant: The variant within the family.
    """

    pattern: str
    family: str
    variant: str


# DeepSeek's assistant marker, written with full-width vertical lines (U+FF5C).
_DEEPSEEK_ASSISTANT = "<\uff5cAssistant\uff5c>"

FAMILIES: tuple[FamilyInfo, ...] = (
    FamilyInfo(
        "hermes",
        "hermes",
        ("qwen3", "qwen3-thinking", "qwq", "qwen2.5", "hermes"),
        "Hermes-style <tool_call>{json}</tool_call> with <think> reasoning "
        "(Qwen2.5, Qwen3, QwQ, NousResearch Hermes)",
    ),
    FamilyInfo(
        "qwen3_coder",
        "qwen3_coder",
        ("qwen3-coder", "qwen3.5"),
        "Qwen3-Coder XML <tool_call><function=NAME><parameter=KEY>VALUE (Qwen3-Coder, Qwen3.5)",
    ),
    FamilyInfo(
        "llama",
        "llama",
        ("llama3-json", "llama4-pythonic", "pythonic"),
        'Llama 3.x JSON {"name", "parameters"} (optional <|python_tag|>) and pythonic '
        "[f(a=1), g(b='x')] calls (Llama 4, Gemma 3, others)",
    ),
    FamilyInfo(
        "mistral",
        "mistral",
        ("v11", "v3", "v13"),
        "Mistral [TOOL_CALLS]: v3 JSON array, v11 NAME[ARGS]{json} with optional "
        "[CALL_ID], v13; [THINK] reasoning",
    ),
    FamilyInfo(
        "deepseek",
        "deepseek",
        ("v3.1", "v3", "r1", "v3.2", "v4"),
        "DeepSeek full-width tool-call markers (V3, R1, V3.1) and DSML (V3.2, V4)",
        {
            "v3": _DEEPSEEK_ASSISTANT,
            "r1": _DEEPSEEK_ASSISTANT + "<think>\n",
            "v3.1": _DEEPSEEK_ASSISTANT + "</think>",
            "v3.2": _DEEPSEEK_ASSISTANT + "</think>",
            "v4": _DEEPSEEK_ASSISTANT + "</think>",
        },
    ),
    FamilyInfo(
        "glm",
        "glm",
        ("glm-4.5", "glm-4.7"),
        "GLM <tool_call>NAME<arg_key>K</arg_key><arg_value>V</arg_value></tool_call>",
        {"glm-4.5": "<|assistant|>", "glm-4.7": "<|assistant|><think>"},
    ),
    FamilyInfo(
        "kimi",
        "kimi",
        ("k2", "k3"),
        "Kimi <|tool_calls_section_begin|> ... functions.NAME:IDX ... (K2, K3)",
        {
            "k2": "<|im_assistant|>assistant<|im_middle|>",
            "k3": '<|open|>message role="assistant"<|sep|><|open|>think<|sep|>',
        },
    ),
    FamilyInfo(
        "harmony",
        "harmony",
        ("gpt-oss",),
        "OpenAI Harmony channels analysis/commentary/final, to=functions.NAME (gpt-oss)",
        {"gpt-oss": "<|start|>assistant"},
    ),
    FamilyInfo(
        "gemma",
        "gemma",
        ("gemma4", "functiongemma"),
        "Gemma tool-call markers (Gemma 4, FunctionGemma)",
    ),
)

# First match wins: keep specific patterns above general ones. Patterns are searched in
# the normalised id (lower case, no org); ``(?![\d.])`` stops "qwen3" matching "qwen30".
MODEL_RULES: tuple[ModelRule, ...] = (
    # --- Qwen: Coder and 3.5+ write XML calls; the rest write Hermes JSON.
    ModelRule(r"qwen3-coder", "qwen3_coder", "qwen3-coder"),
    ModelRule(r"qwen3\.[5-9]", "qwen3_coder", "qwen3.5"),
    ModelRule(r"qwq", "hermes", "qwq"),
    ModelRule(r"qwen3(?![\d.]).*thinking", "hermes", "qwen3-thinking"),
    ModelRule(r"qwen3(?![\d.])", "hermes", "qwen3"),
    ModelRule(r"qwen2(?:\.5)?(?![\d.])", "hermes", "qwen2.5"),
    ModelRule(r"hermes-?[2-4]|deephermes", "hermes", "hermes"),
    # --- Meta Llama, and models documented with pythonic calls.
    ModelRule(r"llama-?4", "llama", "llama4-pythonic"),
    ModelRule(r"llama-?3(?:\.[123])?(?![\d])", "llama", "llama3-json"),
    ModelRule(r"gemma-?3(?![\d.n])", "llama", "pythonic"),
    # --- Gemma 4 / FunctionGemma markers.
    ModelRule(r"functiongemma", "gemma", "functiongemma"),
    ModelRule(r"gemma-?4", "gemma", "gemma4"),
    # --- DeepSeek: most specific first.
    ModelRule(r"deepseek-v3\.1", "deepseek", "v3.1"),
    ModelRule(r"deepseek-v3\.2", "deepseek", "v3.2"),
    ModelRule(r"deepseek-v4", "deepseek", "v4"),
    ModelRule(r"deepseek-r1(?!-distill)", "deepseek", "r1"),
    ModelRule(r"deepseek-v3", "deepseek", "v3"),
    # --- GLM: 4.5/4.6 put a newline after the name; 4.7 and later do not.
    ModelRule(r"glm-4\.[56]", "glm", "glm-4.5"),
    ModelRule(r"glm-(?:4\.[7-9]|5)", "glm", "glm-4.7"),
    # --- Kimi.
    ModelRule(r"kimi-k3", "kimi", "k3"),
    ModelRule(r"kimi-k2", "kimi", "k2"),
    # --- gpt-oss.
    ModelRule(r"gpt-oss", "harmony", "gpt-oss"),
    # --- Mistral tokenizer versions: v13 (2509+ releases, Ministral 3, Devstral 2),
    # v11 (Small 3.2, Magistral/Devstral 2506-2507), v3 and v7 (older releases; v7 keeps
    # the v3 JSON-array call shape).
    ModelRule(r"magistral-(?:small|medium)-(?:1\.[2-9]|25(?:09|1\d))", "mistral", "v13"),
    ModelRule(r"devstral-(?:2|small-2)(?![\d])|devstral-.*25(?:1\d)", "mistral", "v13"),
    ModelRule(r"ministral-3(?![\d])|mistral-large-3|mistral-medium-3\.[2-9]", "mistral", "v13"),
    ModelRule(r"magistral|devstral", "mistral", "v11"),
    ModelRule(r"mistral-small-3\.2|mistral-medium-3", "mistral", "v11"),
    ModelRule(r"mistral|mixtral|ministral|codestral|pixtral", "mistral", "v3"),
)

_BY_NAME = {info.name: info for info in FAMILIES}
_COMPILED = tuple((re.compile(rule.pattern), rule) for rule in MODEL_RULES)


def normalize_model_id(model: str) -> str:
    """Lower-case a model id and drop its organisation or path.

    ``"Qwen/Qwen3-8B"`` → ``"qwen3-8b"``; an underscore or space counts as ``-``.
    """
    base = model.strip().replace("\\", "/").rstrip("/").rsplit("/", 1)[-1]
    return re.sub(r"[_\s]+", "-", base.lower())


def family_info(family: str) -> FamilyInfo:
    """Return the :class:`FamilyInfo` of ``family`` (case-insensitive).

    Raises:
        CallerError: No such family; the message lists the known ones.
    """
    if not isinstance(family, str):
        raise CallerError(f"family must be a str, got {type(family).__name__}")
    info = _BY_NAME.get(family.strip().lower().replace("-", "_"))
    if info is None:
        raise CallerError(f"unknown format family {family!r}; known families: {_known()}")
    return info


def resolve_model(model: str) -> tuple[str, str]:
    """Return the ``(family, variant)`` a Hugging Face model id uses.

    Raises:
        CallerError: The id matches no family; the message lists the known families.
    """
    if not isinstance(model, str) or not model.strip():
        raise CallerError(f"model must be a non-empty str, got {model!r}")
    name = normalize_model_id(model)
    for pattern, rule in _COMPILED:
        if pattern.search(name):
            return rule.family, rule.variant
    raise CallerError(
        f"no tool-call format known for model {model!r}; known families: {_known()}",
        hint="pick one with toolwire.formats.get(family, variant)",
    )


def make_format(
    family: str,
    variant: str | None = None,
    *,
    tools: Sequence[Mapping[str, Any] | ToolDef] | None = None,
    generation_prompt: str | None = None,
) -> Format:
    """Build the format object of ``family`` / ``variant`` (default variant if ``None``).

    Raises:
        CallerError: Unknown family or variant, or a family module not installed.
    """
    info = family_info(family)
    chosen = info.default_variant if variant is None else variant
    info.check_variant(chosen)
    module = _load(info)
    fmt: Format = module.make(chosen, tools=tools, generation_prompt=generation_prompt)
    return fmt


def _load(info: FamilyInfo) -> Any:
    try:
        return importlib.import_module(f"{__package__}.{info.module}")
    except ModuleNotFoundError as error:
        if error.name != f"{__package__}.{info.module}":
            raise
        raise CallerError(f"format family {info.name!r} is not available in this build") from None


def _known() -> str:
    return ", ".join(info.name for info in FAMILIES)
