"""Training with keras-gated: recipes, the input pipeline, the resumable fit loop.

Each module has one job:

* ``recipes``: the paper recipes as data (``Recipe``, ``get_recipe``);
* ``transforms``: the input pipeline described once (``Transforms``) and its numpy run;
* ``numpy_engine``, ``tf_augment`` and ``tf_epochs``: the numpy and ``tf.data`` engines
  that run a ``Transforms`` for ``fit``; ``pipeline``: an engine chosen, a split loaded
  for it and its batches made;
* ``optimizers`` and ``schedules``: a recipe's optimiser, weight decay and learning rate;
* ``build``: a run built from its settings (data, model, compiled optimiser);
* ``callbacks``, ``run_dir`` and ``loop``: the resumable fit loop, its backups and logs,
  and the run folder;
* ``phases``: a run of several training phases (compression's) over that loop, and
  ``distill``: a phase's loss taught by a frozen teacher (knowledge distillation);
* ``distribute``: the distribution strategies.

The command-line scripts that use them (``python -m training.train`` and the rest) live
in the source checkout's ``training/`` folder. Importing this package imports nothing:
each module is imported where it is used.
"""
