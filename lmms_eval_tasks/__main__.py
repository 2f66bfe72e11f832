"""`python -m lmms_eval_tasks` and `accelerate launch -m lmms_eval_tasks`: the pack's `lmms_eval` launcher."""

from lmms_eval_tasks.host.launcher import run

if __name__ == "__main__":
    run()
