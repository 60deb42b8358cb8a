"""The Python fixtures' duration parser against the table the harness's C++
parser is tested with (tests/data/durations.json): one grammar on both sides."""
import json
import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "fixtures", "python"))
import fixture_util as fx  # noqa: E402


class DurationGrammar(unittest.TestCase):
    def test_shared_table(self):
        with open(os.path.join(HERE, "..", "data", "durations.json")) as f:
            table = json.load(f)
        for text, ns in table:
            with self.subTest(text=text):
                if ns is None:
                    with self.assertRaises(ValueError):
                        fx.parse_duration(text)
                else:
                    self.assertAlmostEqual(fx.parse_duration(text), ns / 1e9, places=12)

    def test_argparse_shows_the_reason(self):
        import argparse
        p = argparse.ArgumentParser(prog="job")
        p.add_argument("--step-time", type=fx.parse_duration)
        self.assertEqual(p.parse_args(["--step-time", "50ms"]).step_time, 0.05)
        with self.assertRaises(SystemExit):
            p.parse_args(["--step-time", "5"])


if __name__ == "__main__":
    unittest.main()
