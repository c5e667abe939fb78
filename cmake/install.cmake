# The installed layout (runner/engine/install_layout.h): the runner finds every file it needs
# relative to itself, so that each way of installing it gives the same tree:
#
#   bin/runner, bin/devshim-probe
#   share/devshim/shim/            sitecustomize.py and the devshim package (put on PYTHONPATH)
#   share/devshim/zygote/          the warm-start server
#
# `cmake --install build --prefix P` installs it under P. The wheel (pyproject.toml,
# scikit-build-core) installs bin/ as the venv's scripts and share/ under the venv's prefix, so the
# venv's bin/runner finds <venv>/share/devshim; it also puts the devshim package into
# site-packages (import devshim, python -m devshim). bin/ and share/ are fixed names: the runner
# looks at <its folder>/../share/devshim and nowhere else.
if(SKBUILD)
  set(_devshim_bin "${SKBUILD_SCRIPTS_DIR}")
  set(_devshim_share "${SKBUILD_DATA_DIR}/share/devshim")
else()
  set(_devshim_bin bin)
  set(_devshim_share share/devshim)
endif()

install(TARGETS runner devshim_probe RUNTIME DESTINATION "${_devshim_bin}")
install(FILES "${CMAKE_SOURCE_DIR}/shim/python/sitecustomize.py"
        DESTINATION "${_devshim_share}/shim")
install(DIRECTORY "${CMAKE_SOURCE_DIR}/shim/python/devshim" DESTINATION "${_devshim_share}/shim"
        PATTERN __pycache__ EXCLUDE)
install(FILES "${CMAKE_SOURCE_DIR}/runner/engine/zygote/devshim_zygote.py"
        DESTINATION "${_devshim_share}/zygote")

# devshim-probe links LibTorch, which is not installed with it: installed by cmake --install it
# keeps the path of the LibTorch it was built with; in a wheel it looks for the torch that lies in
# the same environment, <prefix>/lib/pythonX.Y/{site,dist}-packages/torch/lib for each CPython the
# wheel serves (a venv, --user and conda: site-packages; Debian's system pip: dist-packages): one
# entry per Python, as the wheel is one for all of them (py3-none, pyproject.toml). Those that do
# not exist cost the loader a failed open each. The probe runs with the torch it finds there and
# reports the LibTorch it loaded; a torch outside the supported releases is named by `runner
# devices` (docs/install.md#torch-releases).
# (CMake's INSTALL_RPATH_USE_LINK_PATH leaves out a LibTorch inside the source folder, as
# setup.sh's .venv is, so its folder is named here.)
set(DEVSHIM_WHEEL_PYTHONS 3.10 3.11 3.12 3.13 3.14 CACHE STRING
    "the CPython versions whose venv's torch the wheel's devshim-probe finds")
set_target_properties(devshim_probe PROPERTIES INSTALL_RPATH "${TORCH_INSTALL_PREFIX}/lib")
if(SKBUILD)
  set(_devshim_rpath "")
  foreach(_devshim_packages site-packages dist-packages)
    foreach(_devshim_python IN LISTS DEVSHIM_WHEEL_PYTHONS)
      list(APPEND _devshim_rpath
           "$ORIGIN/../lib/python${_devshim_python}/${_devshim_packages}/torch/lib")
    endforeach()
  endforeach()
  set_target_properties(devshim_probe PROPERTIES INSTALL_RPATH "${_devshim_rpath}")
endif()
