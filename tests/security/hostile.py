"""A runs folder whose content attacks whoever renders it: HTML/JS payloads and API keys in
task names, exception messages, verifier output and trajectories (messages, reasoning,
commands, tool arguments, observations).

Two jobs of the same agent (``base-night`` and ``cand-night``), three tasks, one attempt each;
the hostile task passes in the first and fails with an exception in the second, so reports
show it as *broken*, with its evidence bundle. Every payload, if it ever ran, would set
``document.title`` to ``PWNED`` and add an ``<ek-pwned>`` element.
"""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

from tests.fuzz.corpus import SKILLS

JS = "document.title='PWNED';document.documentElement.appendChild(document.createElement('ek-pwned'))"
PAYLOADS = [
    f"<script>{JS}</script>",
    f'<img src=x onerror="{JS}">',
    f'<svg onload="{JS}"><script>{JS}</script></svg>',
    f"</script><script>{JS}</script>",
    f"</table></div></pre></details></td></tr></tbody></table><script>{JS}</script>",
    f"</textarea></style></title><img src=x onerror={JS}>",
    f'<a href="javascript:{JS}">click me</a>',
    f'<details open ontoggle="{JS}">x</details>',
    f'<iframe srcdoc="<script>top.{JS}</script>"></iframe>',
    f'<input autofocus onfocus="{JS}">',
    f'<meta http-equiv="refresh" content="0;url=javascript:{JS}">',
    f'<noscript><p title="</noscript><img src=x onerror={JS}>"></noscript>',
    "<style>body{display:none}</style><base href='http://ek-evil.invalid/'>",
    f'[click](javascript:{JS}) ![pixel](http://ek-evil.invalid/pixel.png) <b onmouseover="{JS}">b</b>',
    f"```\n</pre><script>{JS}</script>\n```",
    "{{constructor.constructor('document.title=1')()}} ${document.title='PWNED'}",
    f"<!-- --><script>{JS}</script><!-- -->",
]
#: Trajectory text that Markdown would mangle (the asterisks into italics): it must reach
#: bundles and reports verbatim.
GLOB = 'for f in /tmp/docs/*.txt; do mv "$f" /tmp/docs/*.md'
#: A name short enough for trial folders; still HTML.
EVIL_TASK = "fix-<img src=x onerror=\"document.title='PWNED'\">-</script><script>document.title='PWNED'</script>"

SECRETS = {
    "anthropic": "sk-ant-api03-" + "A1b2C3d4" * 5,
    "openai": "sk-proj-" + "Zz09Yy87" * 4,
    "github": "ghp_" + "a1B2" * 9,
    "aws": "AKIA" + "QWERTYUIOPASDFGH",
    "bearer": "Bearer " + "eyJhbGciOiJI" + "x9" * 10,
    "huggingface": "hf_" + "Q" * 30,
    "slack": "xoxb-123456789012-abcdefghijklmn",
    "google": "AIza" + "S" * 35,
}
#: A secret without any key pattern, as an agent would echo it from its environment: only
#: known as a secret because an env var of this machine (ENV_NAME) holds it.
ENV_NAME, ENV_SECRET = "EK_HOSTILE_API_KEY", "plain-env-value-4f9c1e7b2a"
#: A secret the job's own config.json holds under a secret-looking name (agents[].env), in
#: no variable of this machine and with no key pattern: the agent echoes it.
CONFIG_NAME, CONFIG_SECRET = "MY_SERVICE_API_KEY", "svc-config-value-77aa11bb"
ALL = "\n".join(
    [
        *PAYLOADS,
        *SECRETS.values(),
        f"echo $EK_HOSTILE_API_KEY -> {ENV_SECRET}",
        f"echo ${CONFIG_NAME} -> {CONFIG_SECRET}",
        GLOB,
    ]
)


def _trajectory(task: str) -> dict:
    steps = [
        {"step_id": 1, "source": "user", "message": f"Solve {task}.\n{ALL}",
         "timestamp": "2026-06-01T10:00:00Z"},
    ]  # fmt: skip
    for i, p in enumerate([*PAYLOADS, *SECRETS.values()]):
        steps.append(
            {
                "step_id": i + 2,
                "source": "agent",
                "timestamp": f"2026-06-01T10:{(i + 1) // 60:02d}:{(i + 1) % 60:02d}Z",
                "message": f"I will run it. {p}",
                "reasoning_content": f"thinking about {p}",
                "tool_calls": [
                    {
                        "tool_call_id": f"c{i}",
                        "function_name": f"bash{'<b>x</b>' if i == 0 else ''}",
                        "arguments": {
                            "command": f"echo '{p}' && curl -H 'Authorization: {SECRETS['bearer']}' x"
                        },
                    }
                ],
                "observation": {
                    "results": [{"source_call_id": f"c{i}", "content": f"out: {p}\nError: {p}"}]
                },
            }
        )
    return {"schema_version": "ATIF-v1.4", "session_id": "s-" + task[:8],
            "agent": {"name": "claude-code", "version": "1", "model_name": "anthropic/claude-x"},
            "steps": steps}  # fmt: skip


def _trial(job: Path, task: str, i: int, passed: bool, start: datetime) -> None:
    name = f"task{i}__{uuid.uuid5(uuid.NAMESPACE_URL, str(job) + task).hex[:7]}"
    d = job / name
    (d / "agent").mkdir(parents=True)
    (d / "verifier").mkdir()
    src = json.loads((SKILLS / "3d-scan-calc__F8Fc7fn" / "result.json").read_text())
    src.update(
        id=str(uuid.uuid5(uuid.NAMESPACE_URL, str(d))),
        task_name=task,
        trial_name=name,
        trial_uri=f"file://{d}",
        task_checksum="c" * 64,
        started_at=start.isoformat(),
        finished_at=(start + timedelta(seconds=90)).isoformat(),
        verifier_result={"rewards": {"reward": 1.0 if passed else 0.0}},
        exception_info=None
        if passed
        else {
            "exception_type": "NonZeroAgentExitCodeError",
            "exception_message": f"failed: {GLOB} {SECRETS['anthropic']} {PAYLOADS[1]}\n{ALL}",
            "exception_traceback": f"Traceback: {ALL}",
            "occurred_at": (start + timedelta(seconds=80)).isoformat(),
        },
    )
    (d / "result.json").write_text(json.dumps(src, indent=2))
    (d / "agent" / "trajectory.json").write_text(json.dumps(_trajectory(task), indent=2))
    (d / "verifier" / "reward.txt").write_text("1.0\n" if passed else "0.0\n")
    out = "\n".join(f"FAILED test_{k} - AssertionError: {p}" for k, p in enumerate(PAYLOADS))
    (d / "verifier" / "test-stdout.txt").write_text(f"{out}\n{ALL}\n")


def build(root: Path) -> Path:
    """Write the hostile runs folder under ``root`` and return it."""
    cfg = json.loads((SKILLS / "config.json").read_text())
    cfg["agents"][0]["env"] = {CONFIG_NAME: CONFIG_SECRET, "LOG_LEVEL": "debug"}
    for n, (job, day) in enumerate((("base-night", 1), ("cand-night", 2))):
        jd = root / job
        jd.mkdir(parents=True)
        start = datetime(2026, 6, day, 10, 0, tzinfo=UTC)
        (jd / "config.json").write_text(json.dumps(cfg | {"job_name": job}, indent=2))
        (jd / "result.json").write_text(json.dumps(
            {"id": str(uuid.uuid5(uuid.NAMESPACE_URL, job)), "started_at": start.isoformat(),
             "finished_at": (start + timedelta(hours=1)).isoformat(), "n_total_trials": 3}))  # fmt: skip
        for i, task in enumerate((EVIL_TASK, "plain-task", "other-task")):
            passed = (task == EVIL_TASK and n == 0) or task == "plain-task"
            _trial(jd, task, i, passed, start + timedelta(minutes=5 * i))
    return root
