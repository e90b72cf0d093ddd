"""Studies over topics: null calibration, planted bugs, prior sensitivity, simulation-based calibration. They ask a topic what it supports (compare.core.registry.Topic); none names a topic."""
