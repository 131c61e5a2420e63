# Recording survives what daemons do to themselves (issue 18): privilege and capability
# drops, chroot, daemonizing, closing every descriptor, lowered resource limits.
add_executable(daemon_subject ${CMAKE_SOURCE_DIR}/tests/daemon/daemon_subject.c)
target_link_libraries(daemon_subject PRIVATE vigil_runtime Threads::Threads)
foreach(t setuid capabilities chroot chroot_setuid daemonize close_range closefrom
          close_loop_proc close_loop_all dup2 nofile fsize as record_setuid to_setuid
          to_chroot)
  add_test(NAME daemon.${t}
           COMMAND ${VIGIL_SPOOL_GUARD} /usr/bin/python3 ${CMAKE_SOURCE_DIR}/tests/daemon/daemon_test.py ${t})
  set_tests_properties(daemon.${t} PROPERTIES ENVIRONMENT "${VIGIL_TEST_ENV}" TIMEOUT 300
                       SKIP_RETURN_CODE 77 LABELS sanitize)
endforeach()
# The sanitizers reserve terabytes of address space (no RLIMIT_AS under them), and
# LeakSanitizer needs /proc at exit (not in a chroot jail).
# record_setuid preloads libvigil through `vigil record`.
set_tests_properties(daemon.as daemon.chroot daemon.chroot_setuid daemon.record_setuid
                     daemon.to_chroot PROPERTIES LABELS "")
