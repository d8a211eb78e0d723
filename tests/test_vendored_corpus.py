"""The upstream conformance corpus belongs to the repository (tests/reference/): it is whole, licensed and traced.

The conformance tests read it through the ``reference`` fixture, which fails when it is missing; this test says
which file is missing or changed, so a partial checkout or a careless edit cannot pass silently.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

CORPUS = Path(__file__).resolve().parent / "reference" / "m365-copilot-eval"

#: sha256 prefixes of every vendored data file (an upstream refresh updates this table on purpose).
MANIFEST = {
    "legacy/example_prompts_alt.json": "80d5f9e26143e486",
    "samples/complex.json": "9307a393a3024b53",
    "samples/example_prompts.json": "3a5e2150412f155a",
    "samples/example_prompts_alt.json": "2d9623668df44872",
    "samples/hr_benefits_leave.json": "1453cf59ccc51aeb",
    "samples/hr_onboarding_policies.json": "5e739928a8ae31e7",
    "samples/multiturn_example.json": "43740889dfd46da2",
    "samples/prompts-retrieval-complex.json": "7479a7cfb7e7f5ac",
    "samples/prompts_ambiguity.json": "9b84c206faa84186",
    "samples/prompts_rag_grounding.json": "3bdc59ab9b434490",
    "samples/starter.json": "19696ec4ca202150",
    "schema/v1/eval-document.schema.json": "01b515dc80d4e5fc",
    "schema/v1/examples/invalid/empty-items.json": "cdc8f3647deaa49a",
    "schema/v1/examples/invalid/invalid-semver.json": "a6cc082af26cb9c6",
    "schema/v1/examples/invalid/missing-error-on-error.json": "6d18c15abd58fe0d",
    "schema/v1/examples/invalid/missing-schema-version.json": "daf87fa691c282a2",
    "schema/v1/examples/invalid/multi-turn-empty-turns.json": "01b8ccf3b298d045",
    "schema/v1/examples/invalid/multi-turn-has-both-prompt-and-turns.json": "a1b22dd361da2023",
    "schema/v1/examples/invalid/multi-turn-missing-prompt.json": "60c92355fe9984f6",
    "schema/v1/examples/invalid/retrieval-query-missing-capability.json": "dc7907db18990bb2",
    "schema/v1/examples/invalid/retrieval-query-missing-selector.json": "d2ddb067a9e03f51",
    "schema/v1/examples/invalid/retrieval-result-missing-assertions.json": "0f401a7bee5b3afb",
    "schema/v1/examples/invalid/wrong-type.json": "185699e10f5488d8",
    "schema/v1/examples/valid/allowed-tools.json": "131ac0d9edc17060",
    "schema/v1/examples/valid/comprehensive.json": "8f2493f331f0965c",
    "schema/v1/examples/valid/custom-evaluators-code-only.json": "d89aceb7c0d012e1",
    "schema/v1/examples/valid/custom-evaluators.json": "44dc5a9bb32c0d45",
    "schema/v1/examples/valid/example_prompts.json": "e479aed72ccee9ed",
    "schema/v1/examples/valid/example_prompts_alt.json": "67189ad9d12c51f6",
    "schema/v1/examples/valid/minimal.json": "1597fa8607f01ed7",
    "schema/v1/examples/valid/multi-turn-output.json": "8aa6dc4fd0f5fb7b",
    "schema/v1/examples/valid/multi-turn-simple.json": "963dd83fb4b7a70a",
    "schema/v1/examples/valid/multiturn_example.json": "2f4dc5f43c396e33",
    "schema/v1/examples/valid/prompts_ambiguity.json": "159646f29d7c39c0",
    "schema/v1/examples/valid/prompts_rag_grounding.json": "16a62959823b4dbf",
    "schema/v1/examples/valid/scenarios-with-mixed-errors.json": "5d6fb248e9b804b9",
    "schema/v1/examples/valid/starter.json": "689d54e05cfc674b",
}


def test_every_vendored_file_is_present_and_unchanged():
    found = {str(path.relative_to(CORPUS)): path for path in CORPUS.rglob("*.json")}
    assert sorted(found) == sorted(MANIFEST), "the vendored corpus gained or lost files"
    changed = [
        name
        for name, path in found.items()
        if hashlib.sha256(path.read_bytes()).hexdigest()[:16] != MANIFEST[name]
    ]
    assert changed == []


def test_the_corpus_carries_its_licence_and_origin():
    assert "MIT License" in (CORPUS / "LICENSE").read_text(encoding="utf-8")
    readme = (CORPUS / "README.md").read_text(encoding="utf-8")
    assert "microsoft/m365-copilot-eval" in readme and "Vendored" in readme


def test_the_reference_fixture_points_into_the_repository(reference):
    assert reference.resolve() == CORPUS.parent.resolve()
