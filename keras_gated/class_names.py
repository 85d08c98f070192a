"""Class names of the data sets keras-gated releases weights for, by data tag."""

from __future__ import annotations

CLASS_NAMES: dict[str, tuple[str, ...]] = {
    "cifar10": (
        "airplane", "automobile", "bird", "cat", "deer",
        "dog", "frog", "horse", "ship", "truck",
    ),
    "fashion_mnist": (
        "T-shirt/top", "Trouser", "Pullover", "Dress", "Coat",
        "Sandal", "Shirt", "Sneaker", "Bag", "Ankle boot",
    ),
}


def class_names_for(tag: str) -> tuple[str, ...]:
    """The class names of a data tag (``"cifar10"``) or of a weight id's data."""
    dataset = tag.partition(".")[2] or tag
    if dataset in CLASS_NAMES:
        return CLASS_NAMES[dataset]
    raise ValueError(
        f"No class names known for {tag!r}. Known data tags: {', '.join(CLASS_NAMES)}; "
        "or pass the class names as a list."
    )
