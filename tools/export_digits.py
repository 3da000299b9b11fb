#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Exports scikit-learn's 8x8 handwritten digits (Debian's python3-sklearn) for samples/digits_mlp.

Run once from anywhere:  /usr/bin/python3 tools/export_digits.py
Writes samples/data/digits_images.npy (uint8 [1797, 64], pixel values 0..16, in scikit-learn's
order) and samples/data/digits_labels.npy (int64 [1797], digits 0..9). CI never runs this: the
outputs are committed. The data's origin and licence are in samples/data/README.md.
"""
import os

import numpy as np
from sklearn.datasets import load_digits

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "samples", "data")


def main():
    digits = load_digits()  # read from the package's own data file: no download
    images = digits.data.astype(np.uint8)  # float64 in scikit-learn, integers 0..16 in the file
    labels = digits.target.astype(np.int64)
    assert images.shape == (1797, 64) and labels.shape == (1797,)
    assert np.array_equal(images, digits.data) and images.max() == 16
    assert set(labels.tolist()) == set(range(10))
    os.makedirs(OUT, exist_ok=True)
    np.save(os.path.join(OUT, "digits_images.npy"), images)
    np.save(os.path.join(OUT, "digits_labels.npy"), labels)
    print(f"wrote {images.shape} uint8 images and {labels.shape} int64 labels to {OUT}")


if __name__ == "__main__":
    main()
