"""How well the analyzer does, measured: on vLLM's release history and by running vLLM's tests.

Not part of the audit: these modules judge it from outside, so they sit above ``analysis``
and ``testing`` and may use both. ``history`` replays consecutive vLLM releases and counts the
stub repairs the audit's findings name (``tools/bench_history.py``); ``judge`` runs a release's
stub-bearing tests under ``factories.testing.stub_runner`` in the interpreter of the vLLM under
test and compares what really ran with the audit's JSON (``tools/judge_stubs_by_running.py``);
``standin_history`` is the ground truth for ``SimpleNamespace``/``argparse.Namespace``
stand-ins: the fields vLLM's tests added to existing ones between releases, and how many of
them ``audit-stubs --standins`` names (``tools/bench_history.py --standins``). None imports
torch or vllm.
"""
