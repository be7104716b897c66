"""What each case must move and compute at the least, as fourfold counts it (src/check/op_cost.h; each row's
count comes with it in the rows file, suites.py), the rotation rule and the row selection of fourfold check."""

import math
from dataclasses import dataclass


@dataclass
class OpCost:
    bytes_read: float = 0.0
    bytes_written: float = 0.0
    flops: float = 0.0
    bytes_made: float = 0.0   # input bytes made that the op need not read (embedding: the table's other rows)

    @property
    def bytes(self):
        return self.bytes_read + self.bytes_written


def op_cost(c):
    return c.cost


def case_work(c):
    return c.work


def rotation_copies(cost, rotate_bytes, max_copies=64):
    """How many input sets a row rotates over so that together they hold at least rotate_bytes."""
    if rotate_bytes == 0:
        return 1
    return int(min(max(math.ceil(rotate_bytes / max(cost.bytes_read + cost.bytes_made, 1.0)), 1), max(max_copies, 1)))


def rotation_seed(seed, copy):
    return seed + 1000 * copy


def selected_cases(suites_cases, rows_per_suite, reference_work_cap):
    """fourfold check's selection (check_runner.cpp selected_cases): per suite, the first rows under the cap;
    a suite with none contributes its smallest row."""
    out = []
    for cases in suites_cases:
        taken, smallest = 0, None
        for c in cases:
            if smallest is None or case_work(c) < case_work(smallest):
                smallest = c
            if rows_per_suite > 0 and taken >= rows_per_suite:
                continue
            if reference_work_cap > 0 and case_work(c) > reference_work_cap:
                continue
            out.append(c)
            taken += 1
        if taken == 0 and smallest is not None:
            out.append(smallest)
    return out
