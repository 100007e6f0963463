"""The command line builds only the options of the command it runs (issue 13: start-up time).

``build_parser(command)`` adds the options of ``command`` alone; the other commands are bare names.
Whatever the arguments, parsing with that parser must give what the whole parser gives: the same
namespace, the same usage error, the same ``--help`` text.
"""

from __future__ import annotations

import pytest

from ablation.cli.parser import UsageError, build_parser, command_of

VALID = [
    ["compare", "b.jsonl", "c.jsonl"],
    ["compare", "b.jsonl", "c.jsonl", "d.jsonl", "--format", "json", "-o", "r.json", "--seed", "3",
     "--where", "x=1", "--margin", "0.02", "--details", "--label", "k=v"],
    ["run", "tasks/a.py", "--baseline", "a.py:b", "--candidate", "a.py:c", "--runs", "3", "--resume"],
    ["report", "latest", "--format", "html", "--alpha", "0.1"],
    ["report"],
    ["plan", "--discordance", "0.1", "--uplift", "0.03"],
    ["init", "proj", "--force"],
    ["schema"],
    [],
]
INVALID = [
    ["compare", "b.jsonl"],
    ["compare", "b.jsonl", "c.jsonl", "--no-such-flag"],
    ["compare", "b.jsonl", "c.jsonl", "--format", "pdf"],
    ["run", "tasks/a.py"],
    ["plan", "--alpha", "x"],
    ["bogus", "a"],
    ["schema", "--format", "json"],
]


@pytest.mark.parametrize("argv", VALID, ids=lambda a: " ".join(a) or "(none)")
def test_partial_parser_gives_the_whole_parsers_namespace(argv: list[str]) -> None:
    assert vars(build_parser(command_of(argv)).parse_args(argv)) == vars(build_parser().parse_args(argv))


@pytest.mark.parametrize("argv", INVALID, ids=" ".join)
def test_partial_parser_gives_the_whole_parsers_usage_error(argv: list[str]) -> None:
    with pytest.raises(UsageError) as whole:
        build_parser().parse_args(argv)
    with pytest.raises(UsageError) as partial:
        build_parser(command_of(argv)).parse_args(argv)
    assert str(partial.value) == str(whole.value)


@pytest.mark.parametrize("argv", [["compare", "--help"], ["run", "-h"], ["--help"], ["plan", "--help"]])
def test_partial_parser_prints_the_same_help(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    texts = []
    for parser in (build_parser(), build_parser(command_of(argv))):
        with pytest.raises(SystemExit):
            parser.parse_args(argv)
        texts.append(capsys.readouterr().out)
    assert texts[0] == texts[1]
    assert "usage: ablation" in texts[0]


def test_command_of_takes_the_first_word_that_names_a_command_with_options() -> None:
    assert command_of(["compare", "run"]) == "compare"
    assert command_of(["-h", "plan", "x"]) == "plan"
    assert command_of(["schema"]) is None  # no options to save
    assert command_of(["bogus", "compare"]) is None  # the whole parser reports the bad command
    assert command_of([]) is None


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["plan", "--effect", "0.05"],
         "ablation: error: ablation plan: unrecognized arguments: --effect 0.05 (see ablation plan --help)"),
        (["schema", "--format", "json"],
         "ablation: error: ablation schema: unrecognized arguments: --format json (see ablation schema --help)"),
        (["--bogus"], "ablation: error: unrecognized arguments: --bogus"),
        (["compare", "b.jsonl"], "ablation: error: ablation compare: the following arguments are required: after"),
    ],
)
def test_a_usage_error_names_the_command_once(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # an unknown option was reported by the top-level parser as "ablation: error: ablation:
    # unrecognized arguments", naming neither the command nor its help
    from ablation.cli.main import main

    assert main(argv) == 1
    assert capsys.readouterr().err.strip() == message
