"""Embedding models: which provider is configured, the bundled ONNX model, hub models."""
