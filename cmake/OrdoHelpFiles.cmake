# cmake -DORDO=<binary> -DOUT_DIR=<dir> -P OrdoHelpFiles.cmake
# Writes OUT_DIR/ordo.1 and OUT_DIR/ordo.bash-completion with the built binary (its usage texts
# are their one source); a failing run stops the build rather than installing an empty file.
foreach(_file "ordo.1:--man" "ordo.bash-completion:--bash-completion")
  string(REPLACE ":" ";" _pair ${_file})
  list(GET _pair 0 _name)
  list(GET _pair 1 _flag)
  execute_process(COMMAND ${ORDO} help ${_flag} OUTPUT_FILE ${OUT_DIR}/${_name}.tmp
                  RESULT_VARIABLE _rc ERROR_VARIABLE _err)
  if(NOT _rc EQUAL 0)
    message(FATAL_ERROR "`${ORDO} help ${_flag}` failed (${_rc}): ${_err}")
  endif()
  file(RENAME ${OUT_DIR}/${_name}.tmp ${OUT_DIR}/${_name})
endforeach()
