"""The pad corpus (benchmarks/pad_corpus.py): how many pad + fft ops the default pipeline leaves, and
that every module still computes what it computed."""
from __future__ import annotations

import os
import sys

import numpy as np
import pytest
from helpers import RTOL

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "benchmarks"))
import pad_corpus  # noqa: E402

# pad + fft ops left on the 59 modules (122 after inlining; 88 before pad-push and fft-truncate's
# forward side; 65 before slice_of_pad stopped splitting a pad that has other users into one pad per
# shifted window; 47 before pads_of_windows, sum_of_interleaved_pads, fft-truncate through scatters
# and the partial_dft_of_fft patterns). Of the 40, 35 modules keep one pad or fft each (a border, a
# shift, a crop-and-pad, an FFT the cost model keeps); fft_conv_60_9 keeps 3 and fft_padded_signal 2.
LEFT = 39


@pytest.fixture(scope="module")
def corpus():
    return pad_corpus.load_all()


def test_corpus_pad_and_fft_count(corpus):
    left = 0
    for m in corpus.values():
        m = m.clone()
        m.optimize()
        left += pad_corpus.pad_fft_count(m)
    assert len(corpus) == 59
    assert left <= LEFT, f"the default pipeline leaves {left} pad + fft ops on the corpus (expected <= {LEFT})"


@pytest.mark.parametrize("name", sorted(pad_corpus.CORPUS))
def test_corpus_results_are_unchanged(corpus, name):
    m = corpus[name].clone()
    args = pad_corpus.inputs(m)
    want = [np.asarray(o) for o in m.compile().call_flat(args)]
    m.optimize()
    for got, expected in zip([np.asarray(o) for o in m.compile().call_flat(args)], want):
        assert got.shape == expected.shape and got.dtype == expected.dtype
        tol = RTOL.get(expected.dtype, 0)
        assert pad_corpus.relative_error(got, expected) <= 4 * tol, name
