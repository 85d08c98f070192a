"""Each convention users bring from Keras, keras-hub and timm, replayed as they write it."""
