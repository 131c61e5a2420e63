# The two queries of the paper (Snodgrass, TOCS 1988; docs/tquel.md, *Two queries*), run
# verbatim by `vigil query` on recordings of the mailbox example and compared with the
# answers computed from the run's ground truth (tests/query/paper_truth.py).
# Recordings by `vigil record` (the preload shim): not under the sanitizers. The runs are
# chosen so that P1 resumes some process (query 1 not empty), except seed41, where P1
# never sends (the answer must be empty).
find_program(PAPER_PYTHON3 python3 HINTS /usr/bin)
if(NOT VIGIL_SANITIZE)
  set(PAPER_RUNS
      "seed41\;--processors 2 --processes 6 --mailboxes 2 --messages 200 --seed 41"
      "seed42\;--processors 2 --processes 6 --mailboxes 2 --messages 200 --seed 42"
      "seed44\;--processors 3 --processes 10 --mailboxes 4 --messages 600 --seed 44 --quantum 1"
      "seed48\;--processors 4 --processes 20 --mailboxes 3 --messages 2000 --seed 48")
  foreach(run ${PAPER_RUNS})
    list(GET run 0 name)
    list(GET run 1 options)
    separate_arguments(options)
    add_test(NAME query.paper.${name}
             COMMAND ${CMAKE_SOURCE_DIR}/tests/query/paper_queries.sh ${CMAKE_BINARY_DIR}/bin
                     ${PAPER_PYTHON3} ${options})
    set_tests_properties(query.paper.${name} PROPERTIES LABELS query TIMEOUT 120)
  endforeach()
endif()
