"""BibTeX of the papers behind each architecture, for model cards."""

from __future__ import annotations

import fnmatch

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

# Architecture name patterns -> the papers they come from; the first matching row applies.
CITED_BY = (
    ("highwaynet50*", ("greff2017highway", "srivastava2015highway", "he2016deep")),
    ("highway*", ("srivastava2015highway",)),
    ("gresnet50*", ("savarese2017residual", "he2016deep")),
    ("gresnetfc*", ("savarese2017residual",)),
    ("gresnet*", ("savarese2017residual", "he2016identity")),
    ("resnet50*", ("he2016deep",)),
    ("resnetfc*", ("savarese2017residual",)),
    ("preactresnet*", ("he2016identity",)),
    ("gwrn_*", ("savarese2017residual", "zagoruyko2016wide")),
    ("wrn_*", ("zagoruyko2016wide",)),
    ("*plainnet*", ("savarese2017residual",)),
)


def citation_keys(arch: str) -> list[str]:
    """The BibTeX keys of the papers behind ``arch`` (empty when none is known)."""
    for pattern, cited in CITED_BY:
        if fnmatch.fnmatch(arch, pattern):
            return list(cited)
    return []


def bibtex(arch: str) -> str:
    """The BibTeX entries of ``arch``'s papers (empty when none is known)."""
    return "\n\n".join(PAPERS[key] for key in citation_keys(arch))
