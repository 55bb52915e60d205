"""Regexes and name lists the detectors use (data, not code).

They become the defaults of :mod:`evalkit.patterns.config` (``DEFAULTS``), which callers
override per detector with ``config=`` in :func:`evalkit.patterns.detect`.

Regexes are Rust-regex syntax (Polars): no look-around, no back-references. Sources:
``peers-statistics-antipatterns.md`` §4 (structural rules, HAL abstention families, OpenHands
stuck rules) and ``rollouts-gates-qc.md`` §1.5-1.7 (go-code's conclusion-watcher phrases and the
runner's retry rule, ported verbatim in ``TRAINERD``).
"""

from __future__ import annotations

# -- shared vocabulary ------------------------------------------------------------------------

#: An observation that looks like a failure (used only when ``is_error`` is null).
ERR = (
    r"(Traceback \(most recent call last\)|\bError\b|\bERROR\b|Exception:|FAILED|FAIL:|"
    r"AssertionError|command not found|No such file or directory|Permission denied|"
    r"Segmentation fault|exit code [1-9]\d*|returned non-zero exit status|ModuleNotFoundError|"
    r"SyntaxError|\b[1-9]\d* failed\b|fatal:|panic:|npm ERR!|error\[E\d+\])"
)

#: A command that runs tests / checks (a "verification").
VERIFY = (
    r"(?i)\b(pytest|py\.test|python3? -m (pytest|unittest)|unittest|npm (run )?test|yarn test|"
    r"pnpm test|go test|go vet|cargo (test|check|clippy)|make\b[^\n;&|]*\b(test|check|lint)|ctest|"
    r"mvn (test|verify)|gradlew? test|tox|nox|bash [^\n]*test[^\n]*\.sh|\./run[-_]tests|"
    r"jest|vitest|mocha|rspec|phpunit|dotnet test|mix test|swift test|ruff check|mypy|"
    r"eslint|tsc\b|flake8|pylint|shellcheck|(^|[;&|]\s*)(diff|cmp) |test -[efsd] |\[ -[efsd] )"
)

#: Tools that only wait / poll (exempt from the windowed repeat rule unless outputs repeat).
POLLING = (
    r"(?i)^\s*(sleep|tail|ps|watch|top|htop|wait|ls|pwd|date|uptime|jobs|free|df|"
    r"git (status|log)|kubectl (get|describe)|docker (ps|logs)|curl -s[^\n]*health)\b"
)

#: Function names (normalised: lower case, no '-'/'_', namespaces stripped) of tools that
#: write a file given by a path argument.
WRITE_TOOLS = (
    "write", "writefile", "createfile", "edit", "editfile", "multiedit", "patchfile",
    "replaceinfile", "strreplace", "strreplacebasededittool", "strreplaceeditor",
    "notebookedit", "applypatch", "patch", "insert", "appendfile", "savefile", "deletefile",
    "filewrite", "fileedit", "editor", "texteditor", "writetofile", "searchreplace",
)  # fmt: skip
#: Of those, the ones that modify an existing file (not create).
MODIFY_TOOLS = (
    "edit", "editfile", "multiedit", "patchfile", "replaceinfile", "strreplace",
    "notebookedit", "applypatch", "patch", "insert", "appendfile", "searchreplace",
)  # fmt: skip
#: Editor-style tools whose ``command`` argument says what they do (str_replace_editor).
EDITOR_COMMANDS_WRITE = ("create", "str_replace", "insert", "undo_edit", "write", "append")
EDITOR_COMMANDS_MODIFY = ("str_replace", "insert", "undo_edit", "append")
#: Function names of tools that read / inspect (normalised).
READ_TOOLS = (
    "read", "readfile", "view", "viewfile", "open", "openfile", "cat", "grep", "glob", "search",
    "find", "listdir", "ls", "gitdiff", "gitlog", "gitshow", "readmanyfiles", "searchfiles",
    "filesearch", "codesearch", "ripgrep", "rg", "lookup", "inspect", "notebookread",
)  # fmt: skip
#: Function names of tools that end the episode.
FINISH_TOOLS = (
    "finish", "submit", "marktaskcomplete", "taskcomplete", "complete", "done", "attemptcompletion",
    "endtask", "finalanswer", "stop",
)  # fmt: skip
#: Argument keys that hold a file path, in order of preference.
PATH_KEYS = ("file_path", "path", "filePath", "filename", "target_file", "notebook_path", "file")

#: A shell command that reads a file (group 1: the path).
SHELL_READ = (
    r"(?:^|[;&|]\s*|\n)\s*(?:sudo\s+)?(?:cat|head|tail|less|more|nl|bat|view|wc|stat|file|"
    r"sed -n|awk|grep|rg|egrep|fgrep|diff|cmp|jq|python3? -m json\.tool|xxd|od|vim?|nano)\b"
    r"[^\n;&|]*?(?:\./)?([\w~+-][\w./~+-]*\.\w+|[\w./~+-]*/[\w.+-]+)"
)
#: Shell commands that modify (not create) a file: append, sed -i, perl -i, patch.
SHELL_MODIFY = r"(>>|\bsed\s+-i|\bperl\s+-p?i|\bpatch\b|\bgit apply\b|\bed\b)"
#: Shell commands that delete / move (group 1: the first path operand).
SHELL_DELETE = r"\b(?:rm|git rm|unlink|mv|git mv)\s+(?:-\w+\s+)*['\"]?([\w./~*+-]+)"

#: File paths in prose (group 1), extensions as in §4.3.
PATH_IN_TEXT = (
    r"([\w./~-]*[\w-]\.(?:py|js|ts|tsx|jsx|json|ya?ml|toml|md|txt|csv|sh|c|cc|cpp|h|hpp|rs|go|"
    r"java|rb|sql|ini|cfg|conf|html|css|ipynb|lock|xml|env|kt|swift|php|scala|r|pdf|png|jpg))\b"
)

#: Test / verifier paths (Harbor's /tests is the verifier and should be invisible).
TEST_PATH = (
    r"(^|/)(tests?|spec|__tests__)/|(^|/)test_[^/]*\.py$|_test\.(py|go)$|\.spec\.[jt]sx?$|"
    r"\.test\.[jt]sx?$|(^|/)conftest\.py$|(^|/)pytest\.ini$|(^|/)tox\.ini$|run[-_]tests\.sh$"
)
#: Harbor's verifier folder.
VERIFIER_PATH = r"^/tests(/|$)|^/verifier(/|$)|/logs/verifier/|reward\.(txt|json)$"
#: Content / commands that disable or fake tests.
TAMPER_CONTENT = (
    r"(@pytest\.mark\.(skip|xfail)|pytest\.skip\(|unittest\.skip|@skip\b|\bassert True\b|"
    r"\bt\.Skip\(|\bit\.skip\(|\bdescribe\.skip\(|\bxit\(|\bxdescribe\(|#\[ignore\]|"
    r"pytest [^\n]*(-k ['\"]?not |--deselect)|sys\.exit\(0\)|\bexit 0\b)"
)
TAMPER_COMMAND = (
    r"(git (checkout|restore|stash)[^\n]*\btests?\b|\brm -r?f?\s+[^\n]*\btests?\b|"
    r"(^|\s)(mv|rm)\s+[^\n]*(test_[\w-]*\.py|_test\.(py|go)|conftest\.py)|"
    r"pytest [^\n]*(-k ['\"]?not |--deselect)|monkeypatch[^\n]*(time|datetime))"
)

#: A completion / success claim (case-insensitive). §4.3 premature_completion + a few.
COMPLETION_CLAIM = (
    r"(?i)(\btask (is )?(now )?(complete|done|finished|accomplished)\b|\ball (tests|checks) "
    r"(now )?pass(ed|es)?\b|\bsuccessfully (completed|implemented|fixed|resolved|created|"
    r"updated|sent|added|applied|generated|wrote|written|installed|configured|built)\b|"
    r"\bI('ve| have) (now )?(completed|finished|fixed|resolved|implemented|sent|created|"
    r"updated|done)\b|\b(the )?(issue|bug|problem|error|fix) (is|has been) (now )?"
    r"(fixed|resolved|implemented|complete)\b|\beverything (is )?(now )?(working|done|in place|"
    r"set)\b|\bworks as expected\b|^\W*(all )?done\b|\bdone[!.]?\s*[✅👍]|\ball set\b|"
    r"\bhere'?s (a |the )?summary of (all )?(the |my )?(changes|what (i|was) (did|done|changed))"
    r"|\bhere'?s what I (changed|did)\b|\bhas been (sent|created|completed|fixed|implemented|"
    r"updated|resolved|delivered)\b|\bis (now )?(complete|fixed|resolved|working)\b)"
)

#: A hedge about the result (§4.3 hedge_assertion).
HEDGE = (
    r"(?i)(\b(should|ought to|probably|likely|presumably|hopefully|in theory|theoretically|"
    r"I (believe|think|expect))\b[^.\n]{0,60}\b(work(s|ing)?|fix(ed|es)?|resolv(ed|es)|"
    r"pass(es|ed)?|correct|succeed(s|ed)?|complete[d]?|be (fine|good))\b|"
    r"\b(seems|appears) to (work|be (working|fixed|correct))\b|"
    r"\bi(?:'m| am) not (?:sure|certain)\b|\bi may be wrong\b)"
)
#: A hedge that sits next to a reported failure is honest, not a hedge (§4.3 FP control).
HEDGE_EXCUSE = r"(?i)\b(tests?|checks?|build|verifier)\b[^.\n]{0,40}\b(fail|error|broke)"

#: Claim of having written a file (group 1: the path), hedged or not (§4.3 + api-contract.md).
FILE_CLAIM = (
    r"(?i)\b(?:created|wrote|written|saved|added|generated|updated|modified|edited|"
    r"implemented|rewrote|rewritten|patched|fixed|changed)\b[^.\n]{0,80}?[`'\"*]*" + PATH_IN_TEXT
)

#: Success / progress words for ignored_error_output, and words that acknowledge a problem.
SUCCESS = r"(?i)\b(success(ful|fully)?|works?|working|passed|passes|done|fixed|complete[d]?|great|perfect)\b"
ACKNOWLEDGE = (
    r"(?i)(error|fail|exception|issue|problem|wrong|traceback|warning|unable|cannot|can't|"
    r"couldn't|didn't|doesn't|isn't|not (found|installed|available|exist)|missing|denied|"
    r"unexpected|oops|hmm|instead|retry|again|but |however|although|though|expected)"
)

#: Verbose re-runs count as diagnosis (§4.3 skipped_diagnostic).
VERBOSE = r"(\s-v+\b|\s-x\b|--tb|--verbose|--debug|RUST_BACKTRACE|set -x|\s-vv|--trace|-X dev)"
#: Inspection commands (a diagnostic action after an error).
INSPECT = (
    r"(?i)^\s*(sudo\s+)?(cat|head|tail|less|more|grep|rg|ls|find|sed -n|awk|nl|wc|stat|file|"
    r"which|type|env|printenv|echo \$|pip (show|list|freeze)|python3? -c|git (diff|log|status|show)|"
    r"journalctl|dmesg|ps|lsof|netstat|ss|curl|wget -S|id|whoami|uname|df|du|tree|jq|diff|cmp|"
    r"strace|ldd|readelf|objdump|man|[\w./-]+ --help|[\w./-]+ -h\b|[\w./-]+ --version)"
)

#: §4.3 architecture_assumption.
ARCH_ACTION = (
    r"(?i)((https?://|\bwget\b|\bcurl\b|\bpip3? (install|download)\b)[^\n]*(x86_64|amd64|"
    r"aarch64|arm64|armv7|linux-gnu|linux-musl|darwin|win64|cu1[0-2]\d|cuda\d|manylinux)|"
    r"\b(apt(-get)?|yum|dnf|apk|brew|pacman|zypper)\s+(-\w+\s+)*(install|add)\b)"
)
ARCH_PROBE = (
    r"(?i)\b(uname( -[amrsp]+)?|arch\b|lscpu|cat /etc/(os-release|issue|lsb-release)|lsb_release|"
    r"nvidia-smi|python3? (--version|-V)|node -v|node --version|which|command -v|"
    r"pip3? (show|list)|dpkg -l|dpkg --print-architecture|ldd --version|getconf|nproc|"
    r"cat /proc/(cpuinfo|version))"
)
ARCH_MISMATCH = (
    r"(exec format error|cannot execute binary file|wrong ELF class|GLIBC_[\d.]+' not found|"
    r"[Ii]llegal instruction|No matching distribution found|not a supported wheel|"
    r"unsupported platform|E: Unable to locate package|apk: command not found|"
    r"apt-get: command not found|apt: command not found|yum: command not found|"
    r"CUDA driver version is insufficient|no CUDA-capable device)"
)
ARCH_MESSAGE = (
    r"(?i)\b(assum(e|ing)|presumably|I'?ll assume)\b[^.\n]{0,40}\b(linux|ubuntu|debian|alpine|"
    r"x86|arm|python ?3?\.?\d*|node|gpu|cuda|version|architecture|os)\b"
)

#: §4.4 context_exhaustion.
CONTEXT = (
    r"(?i)(context[_ ]length|maximum context|context window (exceeded|is full|limit)|"
    r"context limit exceeded|too many tokens|prompt is too long|context_length_exceeded|"
    r"input is too long|exceeds? the (model'?s )?(maximum )?context|ContextWindowExceeded|"
    r"ContextLengthExceeded)"
)
#: Context management events (summarisation / compaction / condensation).
CONDENSE = (
    r"(?i)(context summarization|summarization and handoff|compact(ed|ing) (the )?conversation|"
    r"auto[-_ ]?compact|condens(ed|ation|er)|conversation (was )?(summari[sz]ed|truncated)|"
    r"\[\d+ messages truncated\])"
)
CONTEXT_EXCEPTIONS = (
    "ContextWindowExceededError", "ContextLengthExceededError", "OutputTokenExceededError",
    "OutputLengthExceededError",
)  # fmt: skip

#: §4.4 timeout_burn.
TIMEOUT_EXCEPTIONS = ("AgentTimeoutError", "TimeoutError", "AgentTimeout")
SLEEP = r"(?i)(^|[;&|\n]\s*)\s*(sleep)\s+(\d+(\.\d+)?)"
WAIT = r"(?i)(^|[;&|\n]\s*)\s*(sleep\b|wait\b|watch\b|tail -f|until |while )"

#: §4.1 HAL abstention families (weight, patterns) for giving_up.
GIVING_UP: dict[str, tuple[float, tuple[str, ...]]] = {
    "inability": (
        1.0,
        (
            r"\bi(?:'m| am) (?:not able|unable) to\b",
            r"\bi cannot\b",
            r"\bi can't\b",
            r"this is (?:beyond|outside) (?:my|the) (?:capabilities|scope)",
            r"i don't have (?:the ability|access|permission)",
        ),
    ),
    "uncertainty": (
        0.7,
        (
            r"i(?:'m| am) not (?:sure|certain)",
            r"\bi don't know\b",
            r"unclear (?:to me|what|how|whether)",
            r"i may be wrong",
            r"this is ambiguous",
        ),
    ),
    "clarification": (
        0.5,
        (
            r"could you (?:please )?(?:clarify|explain|specify)",
            r"i need (?:more )?(?:information|details|context)",
        ),
    ),
    "refusal": (
        1.0,
        (
            r"\bi (?:cannot|can't|won't|will not) (?:proceed|continue|complete)",
            r"\bi must (?:stop|decline|refuse)",
            r"\bstopping here\b",
            r"\bunable to (?:proceed|continue|complete)",
        ),
    ),
}
