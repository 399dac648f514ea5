"""Automatic mixed precision: the policies (:mod:`.policy`), the passes (:mod:`.passes`), the
cell applying them (:mod:`.cell`), loss scaling (:mod:`.loss_scale`) and the user namespace
``mskernel.amp`` (:mod:`.api`)."""
