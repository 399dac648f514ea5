"""Vertical federated learning: two parties hold different feature columns of overlapping
sets of users.  They first align their rows by private set intersection
(:mod:`~mskernel_federated.vertical.psi`), then train a split network
(:mod:`~mskernel_federated.vertical.split`): a bottom model at each party, the top model
and the labels at the label party, exchanging only activations and their gradients;
:func:`~mskernel_federated.vertical.label_dp.randomized_response` makes the labels
differentially private.
"""

from .label_dp import randomized_response
from .psi import PsiError, PsiParty, intersect
from .split import BottomParty, LabelParty, train_split

__all__ = ["BottomParty", "LabelParty", "PsiError", "PsiParty", "intersect",
           "randomized_response", "train_split"]
