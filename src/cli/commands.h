/* The vigil command: one file per subcommand, each exporting one entry point. */
#ifndef VIGIL_CLI_COMMANDS_H
#define VIGIL_CLI_COMMANDS_H

int vg_cmd_record(int argc, char **argv);
int vg_cmd_dump(int argc, char **argv);
int vg_cmd_recover(int argc, char **argv);
int vg_cmd_gen(int argc, char **argv);
int vg_cmd_relations(int argc, char **argv);
int vg_cmd_query(int argc, char **argv);
int vg_cmd_explain(int argc, char **argv);
int vg_cmd_watch(int argc, char **argv);
int vg_cmd_model(int argc, char **argv);
int vg_cmd_diff(int argc, char **argv);
int vg_cmd_cdf(int argc, char **argv);
int vg_cmd_check(int argc, char **argv);
int vg_cmd_net(int argc, char **argv);
int vg_cmd_clock(int argc, char **argv);
int vg_cmd_probes(int argc, char **argv);
int vg_cmd_report(int argc, char **argv);
int vg_cmd_send(int argc, char **argv);
int vg_cmd_store(int argc, char **argv);
int vg_cmd_ui(int argc, char **argv);
int vg_cmd_display(int argc, char **argv);
int vg_cmd_export(int argc, char **argv);
int vg_cmd_usdt(int argc, char **argv);

#endif
