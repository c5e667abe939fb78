# Fails when a source file includes a header of a layer its own layer may not reach
# (docs/architecture.md#layers). Run by the build (target check_layers) and by hand:
#
#   cmake -DROOT=<source tree> -P cmake/check_layers.cmake
#
# A layer is a folder; a file may include headers of its own folder and of the folders its layer
# lists below. Folders not listed (tests/, bench/, fuzz/, shim/) are not checked.
cmake_minimum_required(VERSION 3.20)
if(NOT ROOT)
  message(FATAL_ERROR "check_layers: set -DROOT=<source tree>")
endif()

# layer folder -> the folders its files may include (itself included).
set(_layers base parsers results engine reports cli)
set(_dir_base base)
set(_dir_parsers parsers)
set(_dir_results runner/results)
set(_dir_engine runner/engine)
set(_dir_reports reports)
set(_dir_cli runner/cli)
set(_may_base base)
set(_may_parsers base parsers)
set(_may_results base parsers results)
set(_may_engine base parsers results engine)
set(_may_reports base parsers results reports)
set(_may_cli base parsers results engine reports cli)

set(_violations 0)
foreach(_layer IN LISTS _layers)
  file(GLOB_RECURSE _files "${ROOT}/${_dir_${_layer}}/*.h" "${ROOT}/${_dir_${_layer}}/*.cpp")
  foreach(_file IN LISTS _files)
    file(STRINGS "${_file}" _lines)
    set(_n 0)
    foreach(_line IN LISTS _lines)
      math(EXPR _n "${_n} + 1")
      if(NOT _line MATCHES "^[ \t]*#[ \t]*include[ \t]*\"([^\"]+)\"")
        continue()
      endif()
      set(_header "${CMAKE_MATCH_1}")
      # The layer the header belongs to: the longest listed folder it lies in.
      set(_owner "")
      set(_owner_len 0)
      foreach(_other IN LISTS _layers)
        string(LENGTH "${_dir_${_other}}/" _len)
        string(SUBSTRING "${_header}" 0 ${_len} _prefix)
        if(_prefix STREQUAL "${_dir_${_other}}/" AND _len GREATER _owner_len)
          set(_owner ${_other})
          set(_owner_len ${_len})
        endif()
      endforeach()
      if(_header MATCHES "^runner/" AND _owner STREQUAL "")
        set(_owner "an unlisted runner folder")
      endif()
      if(_owner STREQUAL "" OR _owner IN_LIST _may_${_layer})
        continue()
      endif()
      file(RELATIVE_PATH _rel "${ROOT}" "${_file}")
      list(JOIN _may_${_layer} ", " _may)
      # One line each, file:line first, as compilers write them (message(NOTICE) does not wrap).
      message(NOTICE "${_rel}:${_n}: the ${_layer} layer includes ${_header} (${_owner}); it may "
                     "include only ${_may}")
      math(EXPR _violations "${_violations} + 1")
    endforeach()
  endforeach()
endforeach()

if(_violations GREATER 0)
  message(FATAL_ERROR "check_layers: ${_violations} include(s) against the layers of "
                      "docs/architecture.md#layers")
endif()
