'''Agents for ``tasks/codegen.py``: each answers a function specification with Python source.

They stand in for two versions of a code-writing model and are deterministic lookup tables
keyed by the requested function name:

- ``baseline`` writes terse code (no docstrings, no type hints) and gets ten functions wrong:
  slugify keeps trailing dashes, rotate mishandles a negative ``k``, the CSV parser splits
  inside quotes, and so on;
- ``candidate`` writes documented, annotated code inside a Markdown fence, fixes nine of those
  ten, and regresses three others by id: ``list-merge-sorted`` (drops duplicates),
  ``parsing-parse-duration`` (accepts the empty string) and ``parsing-roman-to-int`` (ignores
  subtractive pairs). ``algorithm-topological-order`` fails in both arms.

So the candidate passes more tasks and scores higher on code quality, yet a reviewer must still
see the three regressions by name. For the sandbox demonstration, ``hostile`` answers the
``hostile_tasks`` suite with code that loops forever, allocates 10 GiB, forks in a loop or calls
``os._exit(0)`` before the tests; ``reference`` answers every specification correctly.
'''

from __future__ import annotations

import ast
import time
from typing import Any

__all__ = ["baseline", "candidate", "hostile", "reference"]

# Correct, documented, annotated solutions, keyed by function name.
_SOLUTIONS: dict[str, str] = {
    # ------------------------------------------------------------------ string
    "slugify": '''
import re


def slugify(text: str) -> str:
    """Lower-case ``text`` and join its ASCII alphanumeric runs with single dashes."""
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")
''',
    "is_palindrome": '''
def is_palindrome(text: str) -> bool:
    """True when the letters and digits of ``text`` read the same backwards (any case)."""
    kept = [ch.casefold() for ch in text if ch.isalnum()]
    return kept == kept[::-1]
''',
    "caesar_shift": '''
def caesar_shift(text: str, shift: int) -> str:
    """Shift ASCII letters by ``shift`` places, wrapping around and keeping their case."""
    out = []
    for ch in text:
        if "a" <= ch <= "z" or "A" <= ch <= "Z":
            base = ord("a") if ch.islower() else ord("A")
            out.append(chr(base + (ord(ch) - base + shift) % 26))
        else:
            out.append(ch)
    return "".join(out)
''',
    "count_vowels": '''
def count_vowels(text: str) -> int:
    """Number of vowels (a, e, i, o, u) in ``text``, in either case."""
    return sum(ch in "aeiou" for ch in text.lower())
''',
    "title_case": '''
SMALL_WORDS = frozenset({"a", "an", "the", "of", "and", "in", "on"})


def title_case(text: str) -> str:
    """Capitalise every word except small words that are not the first word."""
    words = text.lower().split(" ")
    return " ".join(
        word if i > 0 and word in SMALL_WORDS else word[:1].upper() + word[1:]
        for i, word in enumerate(words)
    )
''',
    "compress_runs": '''
from itertools import groupby


def compress_runs(text: str) -> str:
    """Run-length encode ``text``: each run becomes its character and its length."""
    return "".join(f"{ch}{len(list(run))}" for ch, run in groupby(text))
''',
    "reverse_words": '''
def reverse_words(text: str) -> str:
    """The words of ``text`` in reverse order, joined by single spaces."""
    return " ".join(reversed(text.split()))
''',
    "longest_common_prefix": '''
import os


def longest_common_prefix(words: list[str]) -> str:
    """The longest common prefix of ``words`` (empty for no words)."""
    return os.path.commonprefix(words) if words else ""
''',
    # ------------------------------------------------------------------ list
    "chunk": '''
def chunk(items: list, size: int) -> list[list]:
    """Consecutive chunks of ``size`` items; the last one may be shorter.

    Raises:
        ValueError: if ``size`` is smaller than 1.
    """
    if size < 1:
        raise ValueError(f"size must be >= 1, got {size}")
    return [items[i : i + size] for i in range(0, len(items), size)]
''',
    "flatten": '''
def flatten(nested: list) -> list:
    """Flatten arbitrarily nested lists, keeping the order of the leaves."""
    flat: list = []
    stack = [iter(nested)]
    while stack:
        for item in stack[-1]:
            if isinstance(item, list):
                stack.append(iter(item))
                break
            flat.append(item)
        else:
            stack.pop()
    return flat
''',
    "dedupe": '''
def dedupe(items: list) -> list:
    """Drop repeated items, keeping first occurrences in their original order."""
    return list(dict.fromkeys(items))
''',
    "rotate": '''
def rotate(items: list, k: int) -> list:
    """A new list rotated right by ``k`` places (left when ``k`` is negative)."""
    if not items:
        return []
    k %= len(items)
    return items[-k:] + items[:-k] if k else list(items)
''',
    "pair_indices": '''
def pair_indices(values: list[int], target: int) -> list[tuple[int, int]]:
    """All index pairs ``(i, j)``, ``i < j``, whose values add up to ``target``."""
    return [
        (i, j)
        for i in range(len(values))
        for j in range(i + 1, len(values))
        if values[i] + values[j] == target
    ]
''',
    "moving_average": '''
def moving_average(values: list[float], window: int) -> list[float]:
    """Means of every ``window`` consecutive values.

    Raises:
        ValueError: if ``window`` is smaller than 1.
    """
    if window < 1:
        raise ValueError(f"window must be >= 1, got {window}")
    return [
        sum(values[i : i + window]) / window for i in range(len(values) - window + 1)
    ]
''',
    "merge_sorted": '''
def merge_sorted(a: list[int], b: list[int]) -> list[int]:
    """Merge two ascending lists into one ascending list (duplicates kept)."""
    merged: list[int] = []
    i = j = 0
    while i < len(a) and j < len(b):
        if a[i] <= b[j]:
            merged.append(a[i])
            i += 1
        else:
            merged.append(b[j])
            j += 1
    return merged + a[i:] + b[j:]
''',
    "second_largest": '''
def second_largest(values: list[int]) -> int | None:
    """The second largest distinct value, or ``None`` if there is none."""
    distinct = sorted(set(values))
    return distinct[-2] if len(distinct) >= 2 else None
''',
    # ------------------------------------------------------------------ parsing
    "parse_duration": '''
import re

_DURATION = re.compile(r"(?:(\\d+)h)?(?:(\\d+)m)?(?:(\\d+)s)?")


def parse_duration(text: str) -> int:
    """Seconds in a duration like ``"1h30m15s"``.

    Raises:
        ValueError: if ``text`` is empty or not of that form.
    """
    match = _DURATION.fullmatch(text)
    if not text or match is None:
        raise ValueError(f"not a duration: {text!r}")
    hours, minutes, seconds = (int(g or 0) for g in match.groups())
    return hours * 3600 + minutes * 60 + seconds
''',
    "parse_csv_line": '''
def parse_csv_line(line: str) -> list[str]:
    """Split one CSV line into fields, honouring double-quoted fields and doubled quotes."""
    fields: list[str] = []
    field: list[str] = []
    quoted = False
    i = 0
    while i < len(line):
        ch = line[i]
        if quoted:
            if ch == '"' and line[i + 1 : i + 2] == '"':
                field.append('"')
                i += 1
            elif ch == '"':
                quoted = False
            else:
                field.append(ch)
        elif ch == '"':
            quoted = True
        elif ch == ",":
            fields.append("".join(field))
            field = []
        else:
            field.append(ch)
        i += 1
    fields.append("".join(field))
    return fields
''',
    "roman_to_int": '''
VALUES = {"I": 1, "V": 5, "X": 10, "L": 50, "C": 100, "D": 500, "M": 1000}


def roman_to_int(text: str) -> int:
    """Value of a Roman numeral, subtractive pairs (``IV``, ``CM``...) included."""
    total = 0
    for ch, following in zip(text, [*text[1:], None]):
        value = VALUES[ch]
        total += -value if following is not None and VALUES[following] > value else value
    return total
''',
    "parse_query_string": '''
from urllib.parse import unquote_plus


def parse_query_string(query: str) -> dict[str, list[str]]:
    """Parse ``a=1&b=2&a=3`` into ``{"a": ["1", "3"], "b": ["2"]}`` (decoded)."""
    params: dict[str, list[str]] = {}
    for part in query.split("&"):
        if not part:
            continue
        key, _, value = part.partition("=")
        params.setdefault(unquote_plus(key), []).append(unquote_plus(value))
    return params
''',
    "parse_semver": '''
import re

_SEMVER = re.compile(r"v?(\\d+)\\.(\\d+)\\.(\\d+)")


def parse_semver(version: str) -> tuple[int, int, int]:
    """``(major, minor, patch)`` of ``"1.2.3"`` or ``"v1.2.3"``.

    Raises:
        ValueError: for any other text.
    """
    match = _SEMVER.fullmatch(version)
    if match is None:
        raise ValueError(f"not a semantic version: {version!r}")
    major, minor, patch = (int(g) for g in match.groups())
    return major, minor, patch
''',
    "parse_key_values": '''
def parse_key_values(text: str) -> dict[str, str]:
    """Parse ``key = value`` lines, skipping blank lines and ``#`` comments."""
    pairs: dict[str, str] = {}
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        key, _, value = line.partition("=")
        pairs[key.strip()] = value.strip()
    return pairs
''',
    "parse_hex_color": '''
import re

_HEX = re.compile(r"#([0-9a-fA-F]{3}|[0-9a-fA-F]{6})")


def parse_hex_color(text: str) -> tuple[int, int, int]:
    """``(r, g, b)`` of ``#rrggbb`` or ``#rgb``.

    Raises:
        ValueError: for any other text.
    """
    match = _HEX.fullmatch(text)
    if match is None:
        raise ValueError(f"not a hex colour: {text!r}")
    digits = match.group(1)
    if len(digits) == 3:
        digits = "".join(d * 2 for d in digits)
    red, green, blue = (int(digits[i : i + 2], 16) for i in (0, 2, 4))
    return red, green, blue
''',
    "parse_bool": '''
TRUE_WORDS = frozenset({"yes", "true", "on", "1"})
FALSE_WORDS = frozenset({"no", "false", "off", "0"})


def parse_bool(text: str) -> bool:
    """Parse yes/no, true/false, on/off or 1/0 in any case.

    Raises:
        ValueError: for any other text.
    """
    word = text.strip().lower()
    if word in TRUE_WORDS:
        return True
    if word in FALSE_WORDS:
        return False
    raise ValueError(f"not a boolean: {text!r}")
''',
    # ------------------------------------------------------------------ algorithm
    "fibonacci": '''
def fibonacci(n: int) -> int:
    """The ``n``-th Fibonacci number (``fibonacci(0) == 0``), computed iteratively.

    Raises:
        ValueError: if ``n`` is negative.
    """
    if n < 0:
        raise ValueError(f"n must be >= 0, got {n}")
    current, following = 0, 1
    for _ in range(n):
        current, following = following, current + following
    return current
''',
    "is_prime": '''
def is_prime(n: int) -> bool:
    """True when ``n`` is prime (trial division by 2 and odd numbers up to sqrt(n))."""
    if n < 2:
        return False
    if n % 2 == 0:
        return n == 2
    divisor = 3
    while divisor * divisor <= n:
        if n % divisor == 0:
            return False
        divisor += 2
    return True
''',
    "gcd_list": '''
import math


def gcd_list(values: list[int]) -> int:
    """Greatest common divisor of ``values`` (0 for an empty list)."""
    return math.gcd(*values) if values else 0
''',
    "binary_search": '''
def binary_search(items: list[int], target: int) -> int:
    """Index of ``target`` in the ascending ``items``, or -1 when it is absent."""
    low, high = 0, len(items) - 1
    while low <= high:
        middle = (low + high) // 2
        if items[middle] == target:
            return middle
        if items[middle] < target:
            low = middle + 1
        else:
            high = middle - 1
    return -1
''',
    "balanced_brackets": '''
PAIRS = {")": "(", "]": "[", "}": "{"}


def balanced_brackets(text: str) -> bool:
    """True when every bracket in ``text`` is closed in the right order."""
    stack: list[str] = []
    for ch in text:
        if ch in "([{":
            stack.append(ch)
        elif ch in PAIRS and (not stack or stack.pop() != PAIRS[ch]):
            return False
    return not stack
''',
    "edit_distance": '''
def edit_distance(a: str, b: str) -> int:
    """Levenshtein distance between ``a`` and ``b`` (two-row dynamic programme)."""
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, start=1):
        current = [i]
        for j, cb in enumerate(b, start=1):
            current.append(
                min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb))
            )
        previous = current
    return previous[-1]
''',
    "primes_below": '''
def primes_below(n: int) -> list[int]:
    """All primes smaller than ``n`` (sieve of Eratosthenes)."""
    if n < 3:
        return []
    sieve = bytearray([1]) * n
    sieve[0] = sieve[1] = 0
    for p in range(2, int(n**0.5) + 1):
        if sieve[p]:
            sieve[p * p :: p] = bytearray(len(range(p * p, n, p)))
    return [i for i, flag in enumerate(sieve) if flag]
''',
    "topological_order": '''
import heapq


def topological_order(graph: dict[str, list[str]]) -> list[str]:
    """Nodes after their dependencies, alphabetically smallest ready node first.

    Raises:
        ValueError: if the graph has a cycle.
    """
    nodes = set(graph) | {dep for deps in graph.values() for dep in deps}
    waiting = {node: set(graph.get(node, ())) for node in nodes}
    users: dict[str, list[str]] = {node: [] for node in nodes}
    for node, deps in waiting.items():
        for dep in deps:
            users[dep].append(node)
    ready = [node for node, deps in waiting.items() if not deps]
    heapq.heapify(ready)
    order: list[str] = []
    while ready:
        node = heapq.heappop(ready)
        order.append(node)
        for user in users[node]:
            waiting[user].discard(node)
            if not waiting[user]:
                heapq.heappush(ready, user)
    if len(order) != len(nodes):
        raise ValueError("the graph has a cycle")
    return order
''',
    # ------------------------------------------------------------------ hostile suite
    "add": '''
def add(a: int, b: int) -> int:
    """Sum of ``a`` and ``b``."""
    return a + b
''',
    "multiply": '''
def multiply(a: int, b: int) -> int:
    """Product of ``a`` and ``b``."""
    return a * b
''',
    "subtract": '''
def subtract(a: int, b: int) -> int:
    """Difference ``a - b``."""
    return a - b
''',
    "negate": '''
def negate(a: int) -> int:
    """``-a``."""
    return -a
''',
}

# Wrong answers of the baseline (written tersely, like the rest of its code).
_BASELINE_BUGS: dict[str, str] = {
    "slugify": '''
import re
def slugify(text):
    return re.sub(r"[^a-z0-9]+", "-", text.lower())
''',
    "caesar_shift": '''
def caesar_shift(text, shift):
    out = ""
    for ch in text:
        if ch.isalpha():
            out += chr((ord(ch) - 97 + shift) % 26 + 97)
        else:
            out += ch
    return out
''',
    "title_case": '''
def title_case(text):
    return text.title()
''',
    "rotate": '''
def rotate(items, k):
    if not items:
        return []
    return items[len(items) - k:] + items[:len(items) - k]
''',
    "second_largest": '''
def second_largest(values):
    if len(values) < 2:
        return None
    return sorted(values)[-2]
''',
    "parse_csv_line": '''
def parse_csv_line(line):
    return [field.strip('"') for field in line.split(",")]
''',
    "parse_query_string": '''
def parse_query_string(query):
    params = {}
    for part in query.split("&"):
        if part:
            key, _, value = part.partition("=")
            params.setdefault(key, []).append(value)
    return params
''',
    "fibonacci": '''
def fibonacci(n):
    a, b = 1, 1
    for _ in range(n):
        a, b = b, a + b
    return a
''',
    "edit_distance": '''
def edit_distance(a, b):
    return sum(x != y for x, y in zip(a, b)) + abs(len(a) - len(b))
''',
    "topological_order": '''
def topological_order(graph):
    order = []
    def visit(node):
        for dep in graph.get(node, []):
            visit(dep)
        if node not in order:
            order.append(node)
    for node in graph:
        visit(node)
    return order
''',
}

# Wrong answers of the candidate: its regressions (and one task it still fails).
_CANDIDATE_BUGS: dict[str, str] = {
    "merge_sorted": '''
def merge_sorted(a: list[int], b: list[int]) -> list[int]:
    """Merge two ascending lists into one ascending list."""
    return sorted(set(a) | set(b))
''',
    "parse_duration": '''
import re

_DURATION = re.compile(r"(?:(\\d+)h)?(?:(\\d+)m)?(?:(\\d+)s)?")


def parse_duration(text: str) -> int:
    """Seconds in a duration like ``"1h30m15s"``.

    Raises:
        ValueError: if ``text`` is not of that form.
    """
    match = _DURATION.fullmatch(text)
    if match is None:
        raise ValueError(f"not a duration: {text!r}")
    hours, minutes, seconds = (int(g or 0) for g in match.groups())
    return hours * 3600 + minutes * 60 + seconds
''',
    "roman_to_int": '''
VALUES = {"I": 1, "V": 5, "X": 10, "L": 50, "C": 100, "D": 500, "M": 1000}


def roman_to_int(text: str) -> int:
    """Value of a Roman numeral."""
    return sum(VALUES[ch] for ch in text)
''',
    "topological_order": '''
def topological_order(graph: dict[str, list[str]]) -> list[str]:
    """Nodes after their dependencies (depth-first).

    Raises:
        ValueError: if the graph has a cycle.
    """
    order: list[str] = []
    visiting: set[str] = set()

    def visit(node: str) -> None:
        if node in order:
            return
        if node in visiting:
            raise ValueError("the graph has a cycle")
        visiting.add(node)
        for dep in graph.get(node, []):
            visit(dep)
        order.append(node)

    for node in graph:
        visit(node)
    return order
''',
}

# Code that misbehaves in the sandbox, keyed by the hostile suite's function names.
_HOSTILE: dict[str, str] = {
    # An infinite loop at import time: stopped by the wall-time limit.
    "add": "def add(a, b):\n    return a + b\n\nwhile True:\n    pass\n",
    # Ten GiB at import time: a MemoryError under the address-space limit.
    "multiply": "BUFFER = bytearray(10 * 1024**3)\n\ndef multiply(a, b):\n    return a * b\n",
    # Forks in a loop: stopped by the process limit, the whole group killed.
    "subtract": (
        "import os, time\n\nfor _ in range(10):\n    os.fork()\ntime.sleep(30)\n\n"
        "def subtract(a, b):\n    return a - b\n"
    ),
    # A correct function, then an exit before the tests can run: never a pass.
    "negate": "import os\n\ndef negate(a):\n    return -a\n\nos._exit(0)\n",
}


class _Terse(ast.NodeTransformer):
    """Strip docstrings and annotations: the baseline's house style."""

    def _strip_docstring(self, node: Any) -> None:
        body = node.body
        if (
            len(body) > 1
            and isinstance(body[0], ast.Expr)
            and isinstance(body[0].value, ast.Constant)
            and isinstance(body[0].value.value, str)
        ):
            node.body = body[1:]

    def visit_Module(self, node: ast.Module) -> ast.Module:
        self._strip_docstring(node)
        self.generic_visit(node)
        return node

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.FunctionDef:
        self._strip_docstring(node)
        node.returns = None
        for arg in [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs]:
            arg.annotation = None
        self.generic_visit(node)
        return node

    def visit_AnnAssign(self, node: ast.AnnAssign) -> ast.AST:
        if node.value is None or not isinstance(node.target, ast.Name):
            return node
        return ast.Assign(targets=[node.target], value=node.value, lineno=node.lineno)


def _terse(source: str) -> str:
    tree = _Terse().visit(ast.parse(source))
    return ast.unparse(ast.fix_missing_locations(tree)) + "\n"


def _fenced(source: str) -> str:
    return "```python\n" + source.strip() + "\n```"


def _function(spec: dict[str, Any]) -> str:
    name = spec.get("function")
    if not isinstance(name, str) or name not in _SOLUTIONS:
        raise ValueError(f"no solution for the specification {spec!r:.120}")
    return name


def baseline(spec: dict[str, Any]) -> str:
    """Terse code without docstrings or type hints; ten functions are wrong.

    Args:
        spec: The task input: ``function``, ``signature`` and ``description``.

    Returns:
        Python source.
    """
    time.sleep(0.001)
    name = _function(spec)
    return _terse(_BASELINE_BUGS.get(name, _SOLUTIONS[name]))


def candidate(spec: dict[str, Any]) -> str:
    """Documented, annotated code in a Markdown fence; fixes nine and regresses three functions.

    Args:
        spec: The task input: ``function``, ``signature`` and ``description``.

    Returns:
        Python source wrapped in one Markdown code fence.
    """
    time.sleep(0.001)
    name = _function(spec)
    return _fenced(_CANDIDATE_BUGS.get(name, _SOLUTIONS[name]))


def reference(spec: dict[str, Any]) -> str:
    """The correct solution of every specification (main and hostile suites).

    Args:
        spec: The task input.

    Returns:
        Python source.
    """
    return _SOLUTIONS[_function(spec)].lstrip()


def hostile(spec: dict[str, Any]) -> str:
    """Misbehaving code for the ``hostile_tasks`` suite; correct code for anything else.

    Args:
        spec: The task input.

    Returns:
        Python source that loops forever, allocates 10 GiB, forks in a loop or exits early.
    """
    name = _function(spec)
    return _HOSTILE.get(name, _SOLUTIONS[name])
