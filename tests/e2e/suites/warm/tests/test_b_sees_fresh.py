import gc
import os
import random
import unittest
import weakref

import warm_state


class SeesFresh(unittest.TestCase):
    def test_nothing_leaked_from_another_file(self):
        print("startup", warm_state.startup())
        print("random", random.random())
        self.assertEqual(warm_state.marks, [])
        self.assertNotIn("E2E_WARM_LEAK", os.environ)
        self.assertEqual(os.getpgid(0), os.getpid(), "its own process group")

    def test_what_a_preload_made_outlives_the_file_before(self):
        self.assertTrue(os.path.isdir(warm_state.workdir.name), warm_state.workdir.name)

    def test_the_collector_frees_what_this_process_made(self):
        class Node:
            pass

        node = Node()
        node.cycle = node
        ref = weakref.ref(node)
        del node
        gc.collect()
        self.assertIsNone(ref())
        print("frozen", gc.get_freeze_count())

    def test_fails_as_usual(self):
        self.assertEqual(1, 2)
