"""The one setting that picks the AITER contract revision: its values, where it comes from, and
the terminal-summary line that names it.

Why: a run that follows the wrong revision calls a correct vLLM wrong (or a broken one right), so
which revision a run followed must be explicit, scoped and printed.
"""

from __future__ import annotations

import pytest

from factories.aiter.revision import (
    CONTRACT_ENV,
    DEFAULT_CONTRACT,
    AiterContract,
    aiter_contract,
    current_contract,
    parse_contract,
    resolve_contract,
)


@pytest.mark.parametrize(
    "value, expected",
    [("pre-3606", AiterContract.PRE_3606), ("3606", AiterContract.PR_3606)],
)
def test_names_parse(value, expected):
    assert parse_contract(value) is expected


@pytest.mark.parametrize("value", ["3607", "post-3606", "", "PRE-3606"])
def test_a_bad_name_is_refused_naming_the_valid_ones(value):
    with pytest.raises(ValueError, match="pre-3606, 3606"):
        parse_contract(value)


def test_the_setting_is_scoped():
    outer = current_contract()
    with aiter_contract("pre-3606"):
        assert current_contract() is AiterContract.PRE_3606
        with aiter_contract("3606"):
            assert current_contract() is AiterContract.PR_3606
        assert current_contract() is AiterContract.PRE_3606
    assert current_contract() is outer


@pytest.mark.parametrize(
    "option, env, expected, reason",
    [
        ("pre-3606", "3606", AiterContract.PRE_3606, "set by option"),
        (None, "pre-3606", AiterContract.PRE_3606, f"set by ${CONTRACT_ENV}"),
        (None, None, DEFAULT_CONTRACT, "default (no real aiter installed"),
        ("auto", None, DEFAULT_CONTRACT, "default (no real aiter installed"),
    ],
    ids=["option-wins", "environment", "auto-by-default", "auto"],
)
def test_resolution_order(monkeypatch, option, env, expected, reason):
    """Option, then environment, then auto: a real AITER's own revision, else the default."""
    import importlib.util

    if importlib.util.find_spec("aiter") is not None:
        pytest.skip("a real aiter is installed here; auto would read its revision")
    if env is None:
        monkeypatch.delenv(CONTRACT_ENV, raising=False)
    else:
        monkeypatch.setenv(CONTRACT_ENV, env)
    contract, why = resolve_contract(option)
    assert contract is expected and why.startswith(reason), why


@pytest.mark.parametrize("contract", ["pre-3606", "3606"])
def test_the_terminal_summary_names_the_revision(pytester, contract):
    pytester.makepyfile(
        "from factories.aiter.revision import current_contract\n"
        "def test_revision():\n"
        f"    assert str(current_contract()) == {contract!r}\n"
    )
    outer = current_contract()
    result = pytester.runpytest(
        "-p", "factories.testing.contracts_plugin", f"--aiter-contract={contract}"
    )
    assert current_contract() is outer  # the inner run's revision ends with it
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(
        ["*AITER PS contract revision*", f"AITER contract revision: {contract} (set by option)"]
    )


def test_a_bad_option_value_is_a_usage_error(pytester):
    pytester.makepyfile("def test_nothing():\n    pass\n")
    result = pytester.runpytest("-p", "factories.testing.contracts_plugin", "--aiter-contract=3607")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--aiter-contract*invalid choice*3607*"])
