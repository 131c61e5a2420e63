# Every fuzz target's kept inputs (seeds, and each crash input kept among them) replayed in
# the normal and the sanitizer build, gcc included: tests/fuzz/replay_main.c is linked
# with the target's LLVMFuzzerTestOneInput and the libraries as they are built there. The
# libFuzzer runs themselves are in the fuzz build (VIGIL_FUZZ=ON, clang). Not labelled
# "fuzz" (`make test` runs those only in the fuzz build).
set(FUZZ_REPLAY_TARGETS
    "metadata|tests/fuzz/fuzz_metadata.c|vigil_trace|tests/fuzz/seeds/metadata"
    "stream|tests/fuzz/fuzz_stream.c|vigil_trace|tests/fuzz/seeds/stream"
    "summary|tests/fuzz/fuzz_summary.c|vigil_trace|tests/fuzz/seeds/summary"
    "vgl|tests/fuzz/fuzz_vgl.c|vigil_lang|tests/lang/good,tests/lang/bad"
    "tquel|tests/fuzz/fuzz_tquel.c|vigil_query|tests/query/tquel_good,tests/query/tquel_bad"
    "query|tests/fuzz/fuzz_query.c|vigil_query,reader_tracegen,vigil_trace,vigil_common|tests/query/fuzz_query_seeds"
    "model|tests/fuzz/model_fuzz.c|vigil_model|tests/fuzz/model_seeds"
    "frame|tests/collector/fuzz_frame.c|vigil_wire|tests/collector/frame_seeds"
    "vgd|tests/fuzz/fuzz_vgd.c|vigil_display|tests/display/bad,tests/display/good"
    "netjson|tests/fuzz/fuzz_netjson.c|vigil_net|tests/fuzz/netjson_seeds"
    "sdt|tests/fuzz/fuzz_sdt.c|vigil_common|tests/fuzz/sdt_seeds")
foreach(spec ${FUZZ_REPLAY_TARGETS})
  string(REPLACE "|" ";" spec "${spec}")
  list(GET spec 0 name)
  list(GET spec 1 src)
  list(GET spec 2 libs)
  list(GET spec 3 seeds)
  string(REPLACE "," ";" libs "${libs}")
  string(REPLACE "," ";" seeds "${seeds}")
  list(TRANSFORM seeds PREPEND ${CMAKE_SOURCE_DIR}/)
  add_executable(fuzz_replay_${name} ${CMAKE_SOURCE_DIR}/tests/fuzz/replay_main.c
                                     ${CMAKE_SOURCE_DIR}/${src})
  target_include_directories(fuzz_replay_${name} PRIVATE ${CMAKE_SOURCE_DIR}/src
                             ${CMAKE_SOURCE_DIR}/src/collector ${CMAKE_SOURCE_DIR}/tests/unit)
  target_link_libraries(fuzz_replay_${name} PRIVATE ${libs} m)
  add_test(NAME fuzz_replay.${name} COMMAND fuzz_replay_${name} ${seeds})
  set_tests_properties(fuzz_replay.${name} PROPERTIES LABELS "sanitize;replay" TIMEOUT 120)
endforeach()
