"""The bad-input catalogue as a whole (tests/test_bad_inputs_*.py, harness tests/bad_inputs.py):
large enough, each case named once, and each run in both executors."""

import glob
import importlib
import os

from bad_inputs import BadInput

_HERE = os.path.dirname(__file__)
MODULES = sorted(os.path.basename(path)[:-3]
                 for path in glob.glob(os.path.join(_HERE, "test_bad_inputs_*.py"))
                 if not path.endswith("_catalogue.py"))


def all_cases():
    """Every :class:`BadInput` the catalogue's modules hold (in lists at module level)."""
    cases = []
    for name in MODULES:
        module = importlib.import_module(name)
        for value in vars(module).values():
            if isinstance(value, (list, tuple)) and value and \
                    all(isinstance(item, BadInput) for item in value):
                cases.extend(value)
    return list({id(case): case for case in cases}.values())


def test_the_catalogue_holds_at_least_400_cases():
    assert len(MODULES) >= 4, MODULES
    assert len(all_cases()) >= 400


def test_each_case_is_named_once():
    names = [case.name for case in all_cases()]
    assert len(names) == len(set(names)), sorted(n for n in set(names) if names.count(n) > 1)


def test_each_case_runs_in_the_interpreter_and_compiled():
    for case in all_cases():
        assert "interpret" in case.runs, case.name
        assert {"compile", "launch"} & set(case.runs), case.name
