/* The sensors of the mailbox system, written by hand as `vigil gen` will later generate
 * them from a sensor description: one inline function per sensor, each checking its
 * enable flag where its placement says, then writing its record into the calling
 * thread's packet.
 *
 *   relation      sensor(s)                               kind         flag on
 *   ProcessState  mailbox.Process.State                   state        the sensor
 *   SendMessage   mailbox.SendMessage                     event        the initiator (sender)
 *   Waiting       mailbox.Waiting.begin / .end            interval     the target (mailbox)
 *   RunningOn     mailbox.RunningOn.begin / .end          interval     the performer (processor),
 *                                                                      sampled
 *
 * The entities themselves (kinds "Processor", "Process", "Mailbox") are recorded by
 * vg_entity_create / vg_entity_reclaim.
 *
 * Exactly one file defines MAILBOX_SENSORS_IMPLEMENTATION before including this header:
 * it gets the sensor table and mb_sensors_register().
 */
#ifndef MAILBOX_SENSORS_H
#define MAILBOX_SENSORS_H

#include "vigil/vigil.h"

struct mb_sensors {
	vg_sensor *process_state;
	vg_sensor *send_message;
	vg_sensor *waiting_begin, *waiting_end;
	vg_sensor *running_on_begin, *running_on_end;
};
extern struct mb_sensors mb_sensors;

/* Registers every sensor; call once before any other function of this header. */
void mb_sensors_register(void);

#define MB_STATE_MAX 15 /* longest state name recorded */

static inline void mb_sensor_process_state(const vg_entity *process, const char *state)
{
	vg_sensor *s = mb_sensors.process_state;
	if (!vg_on(s))
		return;
	uint8_t *p = vg_event_begin(s, 12 + MB_STATE_MAX + 1);
	if (!p)
		return;
	p = vg_put_ref(p, process);
	p = vg_put_str(p, state, MB_STATE_MAX);
	vg_event_commit(p);
}

static inline void mb_sensor_send_message(const vg_entity *sender, const vg_entity *mailbox,
                                          uint32_t msg, uint32_t payload)
{
	vg_sensor *s = mb_sensors.send_message;
	if (!vg_on_entity(s, sender))
		return;
	uint8_t *p = vg_event_begin(s, 12 + 12 + 4 + 4);
	if (!p)
		return;
	p = vg_put_ref(p, sender);
	p = vg_put_ref(p, mailbox);
	p = vg_put_u32(p, msg);
	p = vg_put_u32(p, payload);
	vg_event_commit(p);
}

static inline void mb_sensor_waiting_begin(const vg_entity *process, const vg_entity *mailbox)
{
	vg_sensor *s = mb_sensors.waiting_begin;
	if (!vg_on_entity(s, mailbox))
		return;
	uint8_t *p = vg_event_begin(s, 12 + 12);
	if (!p)
		return;
	p = vg_put_ref(p, process);
	p = vg_put_ref(p, mailbox);
	vg_event_commit(p);
}

static inline void mb_sensor_waiting_end(const vg_entity *process, const vg_entity *mailbox)
{
	vg_sensor *s = mb_sensors.waiting_end;
	if (!vg_on_entity(s, mailbox))
		return;
	uint8_t *p = vg_event_begin(s, 12 + 12);
	if (!p)
		return;
	p = vg_put_ref(p, process);
	p = vg_put_ref(p, mailbox);
	vg_event_commit(p);
}

static inline void mb_sensor_running_on_begin(const vg_entity *process, const vg_entity *processor)
{
	vg_sensor *s = mb_sensors.running_on_begin;
	if (!vg_on_entity(s, processor))
		return;
	uint8_t *p = vg_event_begin(s, 12 + 12);
	if (!p)
		return;
	p = vg_put_ref(p, process);
	p = vg_put_ref(p, processor);
	vg_event_commit(p);
}

static inline void mb_sensor_running_on_end(const vg_entity *process, const vg_entity *processor)
{
	vg_sensor *s = mb_sensors.running_on_end;
	if (!vg_on_entity(s, processor))
		return;
	uint8_t *p = vg_event_begin(s, 12 + 12);
	if (!p)
		return;
	p = vg_put_ref(p, process);
	p = vg_put_ref(p, processor);
	vg_event_commit(p);
}

#ifdef MAILBOX_SENSORS_IMPLEMENTATION

struct mb_sensors mb_sensors;

static const vg_field_desc mb_state_fields[] = {
    {"process", VG_ENTITY, "Process"},
    {"state", VG_STRING, NULL},
};
static const vg_field_desc mb_send_fields[] = {
    {"sender", VG_ENTITY, "Process"},
    {"mailbox", VG_ENTITY, "Mailbox"},
    {"msg", VG_UINT32, NULL},
    {"payload", VG_UINT32, NULL},
};
static const vg_field_desc mb_waiting_fields[] = {
    {"process", VG_ENTITY, "Process"},
    {"mailbox", VG_ENTITY, "Mailbox"},
};
static const vg_field_desc mb_running_on_fields[] = {
    {"process", VG_ENTITY, "Process"},
    {"processor", VG_ENTITY, "Processor"},
};

#define MB_FIELDS(f) .fields = f, .nfields = sizeof f / sizeof *f

/* Roles are field indexes; performer -1 means the recording thread. */
static const vg_type_desc mb_state_desc = {
    .name = "mailbox.Process.State",
    .relation = "ProcessState",
    .kind = VG_KIND_STATE,
    .placement = VG_FLAG_SENSOR,
    MB_FIELDS(mb_state_fields),
    .performer = -1,
    .initiator = -1,
    .target = 0,
};
static const vg_type_desc mb_send_desc = {
    .name = "mailbox.SendMessage",
    .relation = "SendMessage",
    .kind = VG_KIND_EVENT,
    .placement = VG_FLAG_INITIATOR,
    MB_FIELDS(mb_send_fields),
    .performer = -1,
    .initiator = 0,
    .target = 1,
};
static const vg_type_desc mb_waiting_begin_desc = {
    .name = "mailbox.Waiting.begin",
    .relation = "Waiting",
    .kind = VG_KIND_BEGIN,
    .placement = VG_FLAG_TARGET,
    MB_FIELDS(mb_waiting_fields),
    .performer = -1,
    .initiator = 0,
    .target = 1,
};
static const vg_type_desc mb_waiting_end_desc = {
    .name = "mailbox.Waiting.end",
    .relation = "Waiting",
    .kind = VG_KIND_END,
    .placement = VG_FLAG_TARGET,
    MB_FIELDS(mb_waiting_fields),
    .performer = -1,
    .initiator = 0,
    .target = 1,
};
static const vg_type_desc mb_running_on_begin_desc = {
    .name = "mailbox.RunningOn.begin",
    .relation = "RunningOn",
    .kind = VG_KIND_BEGIN,
    .placement = VG_FLAG_PERFORMER,
    .sampled = 1,
    MB_FIELDS(mb_running_on_fields),
    .performer = 1,
    .initiator = -1,
    .target = 0,
};
static const vg_type_desc mb_running_on_end_desc = {
    .name = "mailbox.RunningOn.end",
    .relation = "RunningOn",
    .kind = VG_KIND_END,
    .placement = VG_FLAG_PERFORMER,
    .sampled = 1,
    MB_FIELDS(mb_running_on_fields),
    .performer = 1,
    .initiator = -1,
    .target = 0,
};

void mb_sensors_register(void)
{
	mb_sensors.process_state = vg_sensor_register(&mb_state_desc);
	mb_sensors.send_message = vg_sensor_register(&mb_send_desc);
	mb_sensors.waiting_begin = vg_sensor_register(&mb_waiting_begin_desc);
	mb_sensors.waiting_end = vg_sensor_register(&mb_waiting_end_desc);
	mb_sensors.running_on_begin = vg_sensor_register(&mb_running_on_begin_desc);
	mb_sensors.running_on_end = vg_sensor_register(&mb_running_on_end_desc);
}

#endif /* MAILBOX_SENSORS_IMPLEMENTATION */
#endif
