"""``keras-gated publish``: a zoo folder uploaded to the Hugging Face Hub, and its
registered config pinned to the published commit (``--pin-official``)."""

from __future__ import annotations

import argparse
import dataclasses
import json
from pathlib import Path

from keras_gated.models.compressed.architectures import read_architectures
from keras_gated.release.hub import keras_hub_handle, publish
from keras_gated.release.zoo_folder import KERAS_HUB_PRESET, pretrained_cfg_from_folder
from keras_gated.weights import registered  # the module: its functions looked up when called


def official_entry(cfg):
    """The registered config of ``cfg``'s weight id and its data file, for
    ``publish --pin-official``; refused (before anything is uploaded) unless the folder
    is that release (same sha256 for every weight file) and the repo is its registered Hub repo."""
    entry = registered.find_pretrained_cfg(cfg.arch, cfg.tag)
    source = registered.cfg_source_file(cfg.weight_id)
    if entry is None or source is None:
        raise ValueError(f"{cfg.weight_id} has no registered config to pin: register it first "
                         "(python -m training.release RUN --register).")
    if entry.files != cfg.files:  # a shard index's own hash does not pin the weights
        raise ValueError(f"The weights in the folder are not the registered {cfg.weight_id} "
                         "(sha256 differs): register this folder first, then publish with "
                         "--pin-official.")
    if entry.hf_hub_id != cfg.hf_hub_id:
        raise ValueError(f"--pin-official pins {cfg.weight_id}'s registered repo "
                         f"{entry.hf_hub_id}, not {cfg.hf_hub_id}: drop --repo-id or "
                         "drop --pin-official.")
    return entry, source


def publish_command(args: argparse.Namespace) -> int:
    """``keras-gated publish FOLDER``."""
    cfg = pretrained_cfg_from_folder(args.folder, hf_hub_id=args.repo_id)  # checks it first
    official = official_entry(cfg) if args.pin_official else None
    commit = publish(args.folder, cfg.hf_hub_id, commit_message=args.message,
                     delete_other_files=args.delete_other_files)
    cfg = dataclasses.replace(cfg, revision=commit)
    print(f"published {args.folder} to {cfg.hf_hub_id}")
    print(f"commit: {commit}")
    if (Path(args.folder) / KERAS_HUB_PRESET).is_dir():
        print(f"keras-hub preset: keras_hub.models.ImageClassifier.from_preset("
              f"{keras_hub_handle(cfg.hf_hub_id)!r}) after `import keras_gated.keras_hub`")
    if official is not None:
        entry, source = official
        registered.write_cfg(dataclasses.replace(entry, revision=commit), source)
        print(f"pinned revision {commit} of the official {cfg.weight_id} in {source}")
    else:
        compressed = (cfg.arch in compressed_names()
                      or (cfg.model_kwargs or {}).get("removed_blocks"))
        release = ("training.release_compressed FOLDER --name NAME" if compressed
                   else "training.release RUN")
        print("registered configs are unchanged; a config for this repo (register it with "
              f"python -m {release} --register, or pass --pin-official when "
              "publishing the official release):")
        print(json.dumps({cfg.weight_id: cfg.to_dict()}, indent=2))
    return 0


def compressed_names() -> set[str]:
    """The registered compressed architectures' names (released by release_compressed)."""
    return {arch.name for arch in read_architectures()}
