"""A module that fails to import with something other than ImportError: an optional ("?")
preload of the warm suite, which the zygote must skip and stay warm."""
raise RuntimeError("broken on purpose")
