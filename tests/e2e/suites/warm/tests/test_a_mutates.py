import os
import random
import unittest

import warm_state


class Mutates(unittest.TestCase):
    def test_changes_preloaded_state(self):
        warm_state.marks.append("a")
        os.environ["E2E_WARM_LEAK"] = "1"
        print("startup", warm_state.startup())
        print("random", random.random())
        print("pid", os.getpid(), "pgid", os.getpgid(0), "ppid_is_runner", os.getppid())
        self.assertEqual(warm_state.marks, ["a"])
        print("workdir", warm_state.workdir.name)
        self.assertTrue(os.path.isdir(warm_state.workdir.name))
