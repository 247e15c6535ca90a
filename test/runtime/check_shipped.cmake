# Fails when a shipped archive (LIBS, a ;-list) defines a symbol of the
# test-only reference kernels (namespace hmrt::ref, runtime/reference/).
# cmake -DNM=nm -DLIBS="libhmrt.a;libhmrt_driver.a" -P check_shipped.cmake
if(NOT NM)
  message(FATAL_ERROR "check_shipped.cmake: NM is not set")
endif()
foreach(lib IN LISTS LIBS)
  execute_process(COMMAND ${NM} -C --defined-only ${lib}
                  OUTPUT_VARIABLE symbols RESULT_VARIABLE rc ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${NM} ${lib} failed: ${err}")
  endif()
  string(REGEX MATCH "hmrt::ref::[A-Za-z0-9_]+" hit "${symbols}")
  if(hit)
    message(FATAL_ERROR "${lib} defines ${hit}: the reference kernels are test-only")
  endif()
  string(REGEX MATCH "hmrt_[a-z]" any "${symbols}")
  if(NOT any)
    message(FATAL_ERROR "${lib}: no hmrt_ symbol found; is NM (${NM}) working?")
  endif()
endforeach()
message(STATUS "no reference kernel in ${LIBS}")
