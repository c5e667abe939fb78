import gc
import os


def config_line(config):
    """The configuration pytest made for this process, as one line (paths made relative)."""
    args = [
        "--junitxml=" + os.path.basename(a.split("=", 1)[1]) if a.startswith("--junitxml=") else a
        for a in config.invocation_params.args
    ]
    plugins = sorted(name for name, _ in config.pluginmanager.list_name_plugin() if "." not in name
                     and not name.isdigit())
    return " ".join([
        f"args={args}",
        f"dir={os.path.relpath(config.invocation_params.dir)}",
        f"rootpath={os.path.relpath(config.rootpath)}",
        f"inipath={os.path.relpath(config.inipath) if config.inipath else None}",
        f"markers={[m.split(':')[0] for m in config.getini('markers')]}",
        f"junitxml={os.path.basename(config.getoption('xmlpath') or '')}",
        f"cacheprovider={config.pluginmanager.has_plugin('cacheprovider')}",
        f"plugins={plugins}",
    ])


def made_where(config):
    """Objects the zygote made before forking are frozen: gc.get_objects() does not list them."""
    return "zygote" if not any(o is config for o in gc.get_objects()) else "this process"
