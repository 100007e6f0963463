"""Code-generation suite: 32 Python function-writing tasks checked by unit tests in a sandbox.

Each task's input is a small specification::

    {"function": "slugify", "signature": "def slugify(text: str) -> str", "description": "..."}

and the agent answers with Python source (a plain string, or one Markdown code fence). The
verifier is :func:`ablation.verifiers.code_tests`: the code and the task's unit tests
(``metadata["tests"]``) run in a fresh, resource-limited subprocess; only a run in which every
test passed counts as a pass. Every task also carries a ``quality_rubric`` (docstring, type hints,
no ``print``) for :class:`ablation.quality.RubricScorer`; ``--quality code_quality`` scores the
code with :class:`ablation.quality.CodeQualityScorer` instead.

Categories: ``string``, ``list``, ``parsing`` and ``algorithm`` (eight tasks each).

Run it::

    ablation run tasks/codegen.py --baseline agents/codegen.py:baseline \\
        --candidate agents/codegen.py:candidate --quality code_quality

``hostile_tasks`` is a separate four-task suite whose ``hostile`` agent (``agents/codegen.py``)
answers with code that loops forever, allocates 10 GiB, forks in a loop or exits before the
tests: it shows that such code fails its trial within the time limit and the campaign goes on.
Load it with ``tasks/codegen.py:hostile_tasks``.
"""

from __future__ import annotations

from ablation import AblationTask, RubricCriterion
from ablation.verifiers import code_tests

__all__ = ["HOSTILE_VERIFIER", "RUBRIC", "VERIFIER", "hostile_tasks", "tasks"]

#: The verifier of the main suite: 5 s of wall time and 256 MiB of address space per run.
VERIFIER = code_tests(time_limit_s=5, memory_mb=256)

#: The verifier of the hostile suite: a shorter time limit keeps the demonstration fast.
HOSTILE_VERIFIER = code_tests(time_limit_s=2, memory_mb=256)

#: Rubric shared by every task (scored by ``RubricScorer``, name ``"rubric"``).
RUBRIC: tuple[RubricCriterion, ...] = (
    RubricCriterion(
        name="docstring",
        description="the function has a docstring",
        pattern=r'def \w+\(.*\).*:\s*\n\s+[rR]?"""',
        weight=2.0,
    ),
    RubricCriterion(
        name="type_hints",
        description="the signature has parameter and return annotations",
        pattern=r"def \w+\([^)]*:[^)]*\)\s*->",
        weight=2.0,
    ),
    RubricCriterion(
        name="no_print",
        description="the function returns its result instead of printing it",
        pattern=r"\bprint\(",
        negate=True,
    ),
)

# Prepended to tests that check for exceptions.
_RAISES = '''
def _raises(exc, fn, *args):
    """True when fn(*args) raises exc."""
    try:
        fn(*args)
    except exc:
        return True
    return False
'''

# (category, function, signature, description, tests)
_SPECS: list[tuple[str, str, str, str, str]] = [
    # ------------------------------------------------------------------ string
    (
        "string",
        "slugify",
        "def slugify(text: str) -> str",
        "Lower-case the text, replace every run of characters that are not ASCII letters or "
        "digits with a single '-', and strip '-' from both ends.",
        """
assert slugify("Hello, World!") == "hello-world"
assert slugify("  Ablation   Campaigns 101 ") == "ablation-campaigns-101"
assert slugify("---") == ""
assert slugify("already-a-slug") == "already-a-slug"
assert slugify("C'est la vie") == "c-est-la-vie"
""",
    ),
    (
        "string",
        "is_palindrome",
        "def is_palindrome(text: str) -> bool",
        "True when the text reads the same backwards, ignoring case and every character that "
        "is not a letter or digit. The empty string is a palindrome.",
        """
assert is_palindrome("A man, a plan, a canal: Panama") is True
assert is_palindrome("race a car") is False
assert is_palindrome("") is True
assert is_palindrome("No 'x' in Nixon") is True
assert is_palindrome("ab") is False
""",
    ),
    (
        "string",
        "caesar_shift",
        "def caesar_shift(text: str, shift: int) -> str",
        "Shift every ASCII letter by `shift` places in the alphabet (wrapping around, keeping "
        "case); leave other characters unchanged. `shift` may be negative or larger than 26.",
        """
assert caesar_shift("abc", 1) == "bcd"
assert caesar_shift("xyz", 3) == "abc"
assert caesar_shift("Hello, World!", 13) == "Uryyb, Jbeyq!"
assert caesar_shift("Abc", -1) == "Zab"
assert caesar_shift("Zebra", 52) == "Zebra"
""",
    ),
    (
        "string",
        "count_vowels",
        "def count_vowels(text: str) -> int",
        "Count the vowels a, e, i, o, u in the text, in either case.",
        """
assert count_vowels("Hello World") == 3
assert count_vowels("AEIOU aeiou") == 10
assert count_vowels("rhythm") == 0
assert count_vowels("") == 0
""",
    ),
    (
        "string",
        "title_case",
        "def title_case(text: str) -> str",
        "Capitalise the first letter of every word and lower-case the rest, except the small "
        "words a, an, the, of, and, in, on, which stay lower-case unless they are the first word. "
        "Words are separated by single spaces.",
        """
assert title_case("the lord of the rings") == "The Lord of the Rings"
assert title_case("a tale OF two cities") == "A Tale of Two Cities"
assert title_case("war and peace") == "War and Peace"
assert title_case("") == ""
""",
    ),
    (
        "string",
        "compress_runs",
        "def compress_runs(text: str) -> str",
        "Run-length encode the text: each run of one character becomes the character followed "
        "by the length of the run ('aaabcc' -> 'a3b1c2').",
        """
assert compress_runs("aaabcc") == "a3b1c2"
assert compress_runs("") == ""
assert compress_runs("z") == "z1"
assert compress_runs("aaaaaaaaaaaa") == "a12"
assert compress_runs("abab") == "a1b1a1b1"
""",
    ),
    (
        "string",
        "reverse_words",
        "def reverse_words(text: str) -> str",
        "Reverse the order of the words; words are separated by any whitespace and the result "
        "joins them with single spaces.",
        """
assert reverse_words("one two  three") == "three two one"
assert reverse_words("  padded  ") == "padded"
assert reverse_words("") == ""
assert reverse_words("a\\tb\\nc") == "c b a"
""",
    ),
    (
        "string",
        "longest_common_prefix",
        "def longest_common_prefix(words: list[str]) -> str",
        "The longest string that every word starts with; the empty string for an empty list.",
        """
assert longest_common_prefix(["flower", "flow", "flight"]) == "fl"
assert longest_common_prefix(["dog", "racecar", "car"]) == ""
assert longest_common_prefix([]) == ""
assert longest_common_prefix(["same", "same"]) == "same"
assert longest_common_prefix(["prefix"]) == "prefix"
""",
    ),
    # ------------------------------------------------------------------ list
    (
        "list",
        "chunk",
        "def chunk(items: list, size: int) -> list[list]",
        "Split the list into consecutive chunks of `size` items (the last may be shorter). "
        "Raise ValueError when size < 1.",
        _RAISES
        + """
assert chunk([1, 2, 3, 4, 5], 2) == [[1, 2], [3, 4], [5]]
assert chunk([], 3) == []
assert chunk([1, 2, 3], 3) == [[1, 2, 3]]
assert _raises(ValueError, chunk, [1], 0)
""",
    ),
    (
        "list",
        "flatten",
        "def flatten(nested: list) -> list",
        "Flatten arbitrarily nested lists into one flat list, keeping the order.",
        """
assert flatten([1, [2, [3, [4]]], 5]) == [1, 2, 3, 4, 5]
assert flatten([]) == []
assert flatten([[], [[]]]) == []
assert flatten(["ab", ["cd"]]) == ["ab", "cd"]
""",
    ),
    (
        "list",
        "dedupe",
        "def dedupe(items: list) -> list",
        "Remove repeated items, keeping the first occurrence of each and the original order.",
        """
assert dedupe([3, 1, 3, 2, 1]) == [3, 1, 2]
assert dedupe([]) == []
assert dedupe(["b", "a", "b"]) == ["b", "a"]
""",
    ),
    (
        "list",
        "rotate",
        "def rotate(items: list, k: int) -> list",
        "Return a new list rotated right by k places; k may be negative (rotate left) or larger "
        "than the list. An empty list stays empty.",
        """
assert rotate([1, 2, 3, 4, 5], 2) == [4, 5, 1, 2, 3]
assert rotate([1, 2, 3], 4) == [3, 1, 2]
assert rotate([1, 2, 3], -1) == [2, 3, 1]
assert rotate([], 3) == []
data = [1, 2]
assert rotate(data, 1) == [2, 1] and data == [1, 2]
""",
    ),
    (
        "list",
        "pair_indices",
        "def pair_indices(values: list[int], target: int) -> list[tuple[int, int]]",
        "All index pairs (i, j) with i < j and values[i] + values[j] == target, sorted.",
        """
assert pair_indices([1, 2, 3, 4], 5) == [(0, 3), (1, 2)]
assert pair_indices([2, 2, 2], 4) == [(0, 1), (0, 2), (1, 2)]
assert pair_indices([], 1) == []
assert pair_indices([5], 10) == []
""",
    ),
    (
        "list",
        "moving_average",
        "def moving_average(values: list[float], window: int) -> list[float]",
        "Means of every run of `window` consecutive values (len(values) - window + 1 of them; "
        "none when the list is shorter). Raise ValueError when window < 1.",
        _RAISES
        + """
assert moving_average([1, 2, 3, 4], 2) == [1.5, 2.5, 3.5]
assert moving_average([1, 2], 3) == []
assert moving_average([2.0, 4.0, 6.0], 3) == [4.0]
assert _raises(ValueError, moving_average, [1.0], 0)
""",
    ),
    (
        "list",
        "merge_sorted",
        "def merge_sorted(a: list[int], b: list[int]) -> list[int]",
        "Merge two ascending lists into one ascending list, keeping duplicates.",
        """
assert merge_sorted([1, 3, 5], [2, 4, 6]) == [1, 2, 3, 4, 5, 6]
assert merge_sorted([1, 1, 2], [1, 3]) == [1, 1, 1, 2, 3]
assert merge_sorted([], [7]) == [7]
assert merge_sorted([], []) == []
""",
    ),
    (
        "list",
        "second_largest",
        "def second_largest(values: list[int]) -> int | None",
        "The second largest distinct value, or None when there are fewer than two distinct values.",
        """
assert second_largest([3, 1, 4, 1, 5]) == 4
assert second_largest([5, 5, 4]) == 4
assert second_largest([7, 7]) is None
assert second_largest([]) is None
assert second_largest([-2, -1]) == -2
""",
    ),
    # ------------------------------------------------------------------ parsing
    (
        "parsing",
        "parse_duration",
        "def parse_duration(text: str) -> int",
        "Seconds in a duration such as '1h30m15s', '45s' or '2h' (units h, m, s, each at most "
        "once, in that order). Raise ValueError for anything else, including the empty string.",
        _RAISES
        + """
assert parse_duration("1h30m15s") == 5415
assert parse_duration("45s") == 45
assert parse_duration("2h") == 7200
assert parse_duration("10m") == 600
assert _raises(ValueError, parse_duration, "")
assert _raises(ValueError, parse_duration, "5x")
assert _raises(ValueError, parse_duration, "1h1h")
""",
    ),
    (
        "parsing",
        "parse_csv_line",
        "def parse_csv_line(line: str) -> list[str]",
        "Split one CSV line into fields. Fields may be quoted with double quotes; a quoted field "
        "may contain commas and doubled quotes (two quotes stand for one).",
        '''
assert parse_csv_line("a,b,c") == ["a", "b", "c"]
assert parse_csv_line('"x, y",z') == ["x, y", "z"]
assert parse_csv_line('"say ""hi""",2') == ['say "hi"', "2"]
assert parse_csv_line("a,,b") == ["a", "", "b"]
assert parse_csv_line("") == [""]
''',
    ),
    (
        "parsing",
        "roman_to_int",
        "def roman_to_int(text: str) -> int",
        "The value of a Roman numeral written with I, V, X, L, C, D, M and subtractive pairs.",
        """
assert roman_to_int("III") == 3
assert roman_to_int("IV") == 4
assert roman_to_int("IX") == 9
assert roman_to_int("LVIII") == 58
assert roman_to_int("MCMXCIV") == 1994
""",
    ),
    (
        "parsing",
        "parse_query_string",
        "def parse_query_string(query: str) -> dict[str, list[str]]",
        "Parse 'a=1&b=2&a=3' into {'a': ['1', '3'], 'b': ['2']}. Decode percent escapes and "
        "'+' as a space in keys and values; a key without '=' has the value ''. An empty query "
        "gives {}.",
        """
assert parse_query_string("a=1&b=2&a=3") == {"a": ["1", "3"], "b": ["2"]}
assert parse_query_string("q=hello+world&x=%2Fpath") == {"q": ["hello world"], "x": ["/path"]}
assert parse_query_string("flag") == {"flag": [""]}
assert parse_query_string("") == {}
""",
    ),
    (
        "parsing",
        "parse_semver",
        "def parse_semver(version: str) -> tuple[int, int, int]",
        "Parse 'MAJOR.MINOR.PATCH' (an optional leading 'v' is allowed) into three ints. Raise "
        "ValueError for anything else.",
        _RAISES
        + """
assert parse_semver("1.2.3") == (1, 2, 3)
assert parse_semver("v10.0.1") == (10, 0, 1)
assert _raises(ValueError, parse_semver, "1.2")
assert _raises(ValueError, parse_semver, "1.2.x")
assert _raises(ValueError, parse_semver, "")
""",
    ),
    (
        "parsing",
        "parse_key_values",
        "def parse_key_values(text: str) -> dict[str, str]",
        "Parse lines of 'key = value' (spaces around '=' and the line are optional); skip blank "
        "lines and lines starting with '#'. A later key overrides an earlier one. Values may "
        "contain '='.",
        """
text = "# settings\\nname = ablation\\n\\nruns=3\\nurl = http://x/?a=b\\nruns = 5\\n"
assert parse_key_values(text) == {"name": "ablation", "runs": "5", "url": "http://x/?a=b"}
assert parse_key_values("") == {}
""",
    ),
    (
        "parsing",
        "parse_hex_color",
        "def parse_hex_color(text: str) -> tuple[int, int, int]",
        "Parse '#rrggbb' or the short form '#rgb' (case-insensitive) into an (r, g, b) tuple. "
        "Raise ValueError for anything else.",
        _RAISES
        + """
assert parse_hex_color("#ff8800") == (255, 136, 0)
assert parse_hex_color("#F80") == (255, 136, 0)
assert parse_hex_color("#000000") == (0, 0, 0)
assert _raises(ValueError, parse_hex_color, "ff8800")
assert _raises(ValueError, parse_hex_color, "#12345")
assert _raises(ValueError, parse_hex_color, "#ggg")
""",
    ),
    (
        "parsing",
        "parse_bool",
        "def parse_bool(text: str) -> bool",
        "Parse yes/no, true/false, on/off and 1/0 (any case, surrounding spaces ignored). Raise "
        "ValueError for anything else.",
        _RAISES
        + """
assert parse_bool("Yes") is True
assert parse_bool(" off ") is False
assert parse_bool("1") is True
assert parse_bool("FALSE") is False
assert _raises(ValueError, parse_bool, "maybe")
""",
    ),
    # ------------------------------------------------------------------ algorithm
    (
        "algorithm",
        "fibonacci",
        "def fibonacci(n: int) -> int",
        "The n-th Fibonacci number with fibonacci(0) == 0 and fibonacci(1) == 1; it must be fast "
        "for n = 90. Raise ValueError for negative n.",
        _RAISES
        + """
assert fibonacci(0) == 0
assert fibonacci(1) == 1
assert fibonacci(10) == 55
assert fibonacci(90) == 2880067194370816120
assert _raises(ValueError, fibonacci, -1)
""",
    ),
    (
        "algorithm",
        "is_prime",
        "def is_prime(n: int) -> bool",
        "True when n is a prime number (n may be any int, including 0, 1 and negatives).",
        """
assert [n for n in range(-3, 30) if is_prime(n)] == [2, 3, 5, 7, 11, 13, 17, 19, 23, 29]
assert is_prime(7919) is True
assert is_prime(7917) is False
""",
    ),
    (
        "algorithm",
        "gcd_list",
        "def gcd_list(values: list[int]) -> int",
        "Greatest common divisor of all values (always >= 0; 0 for an empty list).",
        """
assert gcd_list([12, 18, 24]) == 6
assert gcd_list([7]) == 7
assert gcd_list([]) == 0
assert gcd_list([-4, 6]) == 2
""",
    ),
    (
        "algorithm",
        "binary_search",
        "def binary_search(items: list[int], target: int) -> int",
        "Index of target in the ascending list (any index if it repeats), or -1 if absent.",
        """
data = list(range(0, 100, 3))
assert all(binary_search(data, v) == i for i, v in enumerate(data))
assert binary_search(data, 4) == -1
assert binary_search([], 1) == -1
assert binary_search([5], 5) == 0
""",
    ),
    (
        "algorithm",
        "balanced_brackets",
        "def balanced_brackets(text: str) -> bool",
        "True when every (, [ and { in the text is closed in the right order; other characters "
        "are ignored.",
        """
assert balanced_brackets("([]{})") is True
assert balanced_brackets("([)]") is False
assert balanced_brackets("f(x[0]) {") is False
assert balanced_brackets("") is True
assert balanced_brackets(")(") is False
""",
    ),
    (
        "algorithm",
        "edit_distance",
        "def edit_distance(a: str, b: str) -> int",
        "Levenshtein distance: the fewest single-character insertions, deletions and "
        "substitutions that turn a into b.",
        """
assert edit_distance("kitten", "sitting") == 3
assert edit_distance("", "abc") == 3
assert edit_distance("flaw", "lawn") == 2
assert edit_distance("same", "same") == 0
""",
    ),
    (
        "algorithm",
        "primes_below",
        "def primes_below(n: int) -> list[int]",
        "All primes p with p < n, ascending (a sieve is expected; n may be 100000).",
        """
assert primes_below(20) == [2, 3, 5, 7, 11, 13, 17, 19]
assert primes_below(2) == []
assert primes_below(0) == []
assert len(primes_below(100000)) == 9592
""",
    ),
    (
        "algorithm",
        "topological_order",
        "def topological_order(graph: dict[str, list[str]]) -> list[str]",
        "Order the nodes so that each node comes after the nodes it depends on (graph maps a "
        "node to its dependencies; dependencies that are not keys are nodes too). Among the "
        "nodes that are ready, take the alphabetically smallest first. Raise ValueError on a "
        "cycle.",
        _RAISES
        + """
assert topological_order({"b": ["a"], "c": ["a"], "a": []}) == ["a", "b", "c"]
assert topological_order({"app": ["lib", "log"], "lib": ["log"]}) == ["log", "lib", "app"]
assert topological_order({"z": [], "y": [], "x": ["z"]}) == ["y", "z", "x"]
assert _raises(ValueError, topological_order, {"a": ["b"], "b": ["a"]})
""",
    ),
]


def _task_id(category: str, function: str) -> str:
    return f"{category}-{function.replace('_', '-')}"


tasks: list[AblationTask] = [
    AblationTask(
        task_id=_task_id(category, function),
        name=function,
        description=description,
        category=category,
        tags=("codegen", "python"),
        input_data={"function": function, "signature": signature, "description": description},
        verifier=VERIFIER,
        quality_rubric=RUBRIC,
        metadata={"tests": tests.strip() + "\n"},
    )
    for category, function, signature, description, tests in _SPECS
]

# The hostile suite: ordinary specifications; the hostile agent's answers misbehave.
_HOSTILE_SPECS: list[tuple[str, str, str, str]] = [
    ("hostile-loop", "add", "def add(a: int, b: int) -> int", "Return a + b."),
    ("hostile-memory", "multiply", "def multiply(a: int, b: int) -> int", "Return a * b."),
    ("hostile-fork", "subtract", "def subtract(a: int, b: int) -> int", "Return a - b."),
    ("hostile-exit", "negate", "def negate(a: int) -> int", "Return -a."),
]

_HOSTILE_TESTS = {
    "add": "assert add(2, 3) == 5\nassert add(-1, 1) == 0\n",
    "multiply": "assert multiply(4, 5) == 20\nassert multiply(0, 9) == 0\n",
    "subtract": "assert subtract(9, 4) == 5\nassert subtract(0, 3) == -3\n",
    "negate": "assert negate(5) == -5\nassert negate(-2) == 2\n",
}

hostile_tasks: list[AblationTask] = [
    AblationTask(
        task_id=task_id,
        name=function,
        description=description,
        category="hostile",
        tags=("codegen", "sandbox"),
        input_data={"function": function, "signature": signature, "description": description},
        verifier=HOSTILE_VERIFIER,
        metadata={"tests": _HOSTILE_TESTS[function]},
    )
    for task_id, function, signature, description in _HOSTILE_SPECS
]
