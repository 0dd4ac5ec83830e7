"""Is a class split into shards deterministically, each submission in exactly one shard, with
balanced shards that do not move when students are added?"""

from collections import Counter

import pytest

from autograder.grading.runs.shards import in_shard, parse_shard, shard_of

ASSIGNMENTS = [f"ex{i:02d}" for i in range(1, 15)]


def test_every_submission_is_in_exactly_one_shard():
    """Do the N shards together hold each (student, assignment) once?"""
    pairs = [(f"s{i}", a) for i in range(50) for a in ASSIGNMENTS]
    for n in (1, 2, 4, 7):
        assert all(sum(in_shard(s, a, (k, n)) for k in range(n)) == 1 for s, a in pairs)
    assert all(in_shard(s, a, None) for s, a in pairs)


@pytest.mark.parametrize(("students", "shards"), [(40, 4), (1000, 16), (10, 2)])
def test_shards_are_balanced(students, shards):
    """Does each shard of a class (students x 14 assignments) hold its share, within 4 standard
    deviations of a uniform split (40 x 14 over 4 shards: 140 each, give or take 24 at most)?"""
    counts = Counter(shard_of(f"student-{i:04d}", a, shards) for i in range(students) for a in ASSIGNMENTS)
    share = students * len(ASSIGNMENTS) / shards
    assert set(counts) == set(range(shards))
    assert max(abs(c - share) for c in counts.values()) <= 4 * (share * (1 - 1 / shards)) ** 0.5


def test_adding_students_moves_no_earlier_submission():
    """When 10 students join a class of 40, does every earlier submission stay in its shard?"""
    before = {(f"s{i}", a): shard_of(f"s{i}", a, 4) for i in range(40) for a in ASSIGNMENTS}
    after = {(f"s{i}", a): shard_of(f"s{i}", a, 4) for i in range(50) for a in ASSIGNMENTS}
    assert all(after[pair] == shard for pair, shard in before.items())


def test_a_shard_is_read_as_K_of_N_from_zero():
    """Is "2/4" the third of four shards, and is anything else refused with what is expected?"""
    assert parse_shard("2/4") == (2, 4) and parse_shard(" 0/1 ") == (0, 1)
    for bad in ("4/4", "1", "-1/4", "a/b", "1/0", ""):
        with pytest.raises(ValueError, match="expected K/N with 0 <= K < N"):
            parse_shard(bad)
