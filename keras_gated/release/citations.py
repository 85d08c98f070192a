"""BibTeX of the papers behind each architecture, for model cards: the entries, by key;
which keys an architecture cites is declared by its family (``FamilySpec.citations``)."""

from __future__ import annotations

import warnings

from keras_gated.registry.families import citation_keys as declared
from keras_gated.registry.families import papers, specs

PAPERS = {
    "srivastava2015highway": """@article{srivastava2015highway,
  title   = {Highway Networks},
  author  = {Srivastava, Rupesh Kumar and Greff, Klaus and Schmidhuber, J{\\"u}rgen},
  journal = {arXiv preprint arXiv:1505.00387},
  year    = {2015}
}""",
    "greff2017highway": """@inproceedings{greff2017highway,
  title     = {Highway and Residual Networks learn Unrolled Iterative Estimation},
  author    = {Greff, Klaus and Srivastava, Rupesh K. and Schmidhuber, J{\\"u}rgen},
  booktitle = {International Conference on Learning Representations (ICLR)},
  year      = {2017}
}""",
    "he2016identity": """@inproceedings{he2016identity,
  title     = {Identity Mappings in Deep Residual Networks},
  author    = {He, Kaiming and Zhang, Xiangyu and Ren, Shaoqing and Sun, Jian},
  booktitle = {European Conference on Computer Vision (ECCV)},
  year      = {2016}
}""",
    "he2016deep": """@inproceedings{he2016deep,
  title     = {Deep Residual Learning for Image Recognition},
  author    = {He, Kaiming and Zhang, Xiangyu and Ren, Shaoqing and Sun, Jian},
  booktitle = {IEEE Conference on Computer Vision and Pattern Recognition (CVPR)},
  year      = {2016}
}""",
    "zagoruyko2016wide": """@inproceedings{zagoruyko2016wide,
  title     = {Wide Residual Networks},
  author    = {Zagoruyko, Sergey and Komodakis, Nikos},
  booktitle = {British Machine Vision Conference (BMVC)},
  year      = {2016}
}""",
    "savarese2017residual": """@article{savarese2017residual,
  title   = {Residual Gates: A Simple Mechanism for Improved Network Optimization},
  author  = {Savarese, Pedro and Figueiredo, Daniel},
  journal = {arXiv preprint arXiv:1611.01260},
  year    = {2017}
}""",
}


def citation_keys(arch: str) -> list[str]:
    """The BibTeX keys of the papers behind ``arch`` (empty when none is known), as its
    family declares them (``FamilySpec.citations``)."""
    return declared(arch)


def bibtex(arch: str) -> str:
    """The BibTeX entries of ``arch``'s papers (empty when none is known)."""
    entries = {**papers(), **PAPERS}
    return "\n\n".join(entries[key] for key in citation_keys(arch))


def __getattr__(name: str):
    """``CITED_BY``, the table this module kept before the families declared their papers."""
    if name != "CITED_BY":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    warnings.warn("keras_gated.release.citations.CITED_BY is deprecated: each family "
                  "declares its citations (FamilySpec.citations).", DeprecationWarning,
                  stacklevel=2)
    return tuple(row for spec in specs() for row in spec.citations)
