# Tests: TODO(owner).
