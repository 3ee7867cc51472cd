/**
 * Webhooks: register (URL, signing secret, events), list with the events each subscribes to, change those events
 * (PATCH /v1/webhooks/{id}), delete; each links to its delivery log. The events offered are the event catalog's
 * (contract §events), each described.
 */
import { DEFAULT_WEBHOOK_EVENTS, EVENT_CATALOG, WEBHOOK_EVENTS, type Webhook } from "@labelgate/sdk/browser";
import { Button, Checkbox, Group, PasswordInput, Stack, Text, TextInput } from "@mantine/core";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { createColumnHelper } from "@tanstack/react-table";
import { useMemo, useState } from "react";
import { Link } from "react-router";
import { errorMessage } from "../../shared/client";
import { formatTime } from "../../shared/format";
import { useSession } from "../auth";
import { FormCard, PageHeader, QueryView, SectionCard, StatusBadge } from "../components/common";
import { type CoreFeatures, DataTable } from "../components/DataTable";

const helper = createColumnHelper<CoreFeatures, Webhook>();

export function WebhooksPage() {
  const { client } = useSession();
  const hooks = useQuery({ queryKey: ["webhooks"], queryFn: () => client.webhooks.list() });
  const columns = useMemo(
    () =>
      helper.columns([
        helper.accessor("callback_url", {
          header: "Callback URL",
          cell: (info) => (
            <Link to={`/webhooks/${encodeURIComponent(info.row.original.webhook_id)}`} className="break-all">
              {info.getValue()}
            </Link>
          ),
        }),
        helper.accessor("events", { header: "Events", cell: (info) => <WebhookEvents hook={info.row.original} /> }),
        helper.accessor("active", { header: "State", cell: (info) => <StatusBadge status={info.getValue() ? "active" : "deleted"} /> }),
        helper.accessor("created_at", { header: "Created", cell: (info) => formatTime(info.getValue()) }),
        helper.display({ id: "actions", header: "Actions", cell: (info) => <WebhookActions hook={info.row.original} /> }),
      ]),
    [],
  );
  return (
    <>
      <PageHeader title="Webhooks">Signed deliveries of the events each webhook subscribes to, with every attempt logged.</PageHeader>
      <Stack>
        <NewWebhook />
        <SectionCard title="Your webhooks">
          <QueryView query={hooks}>
            {(list) => <DataTable columns={columns} data={list} caption="Webhooks" rowKey={(h) => h.webhook_id} empty="No webhook yet." />}
          </QueryView>
        </SectionCard>
      </Stack>
    </>
  );
}

type EventName = (typeof WEBHOOK_EVENTS)[number];

/** A checkbox per event of the catalog, each with its description. */
function EventChoice({ label, value, onChange }: { label: string; value: string[]; onChange: (events: string[]) => void }) {
  return (
    <Checkbox.Group label={label} value={value} onChange={onChange}>
      <Stack gap={4} mt={4}>
        {WEBHOOK_EVENTS.map((name) => (
          <Checkbox key={name} value={name} label={name} description={EVENT_CATALOG[name].description} />
        ))}
      </Stack>
    </Checkbox.Group>
  );
}

/** A webhook's events, and (active webhooks) a form to change them. */
function WebhookEvents({ hook }: { hook: Webhook }) {
  const { client } = useSession();
  const queryClient = useQueryClient();
  const [editing, setEditing] = useState(false);
  const [events, setEvents] = useState<string[]>(hook.events);
  const save = useMutation({
    mutationFn: () => client.webhooks.update(hook.webhook_id, { events: events as EventName[] }),
    onSuccess: () => {
      setEditing(false);
      void queryClient.invalidateQueries({ queryKey: ["webhooks"] });
    },
  });
  if (!editing) {
    return (
      <Group gap="xs" wrap="nowrap">
        <Text size="sm">{hook.events.join(", ")}</Text>
        {hook.active && (
          <Button
            size="xs"
            variant="subtle"
            onClick={() => {
              setEvents(hook.events);
              save.reset();
              setEditing(true);
            }}
            aria-label={`Edit events of ${hook.callback_url}`}
          >
            Edit
          </Button>
        )}
      </Group>
    );
  }
  return (
    <Stack gap="xs">
      <EventChoice label={`Events of ${hook.callback_url}`} value={events} onChange={setEvents} />
      <Group gap="xs">
        <Button size="xs" onClick={() => save.mutate()} loading={save.isPending} disabled={events.length === 0}>
          Save events
        </Button>
        <Button size="xs" variant="default" onClick={() => setEditing(false)}>
          Cancel
        </Button>
      </Group>
      {events.length === 0 && (
        <Text size="xs" c="dimmed">
          Choose at least one event.
        </Text>
      )}
      {save.error && (
        <Text c="red" size="xs" role="alert">
          {errorMessage(save.error)}
        </Text>
      )}
    </Stack>
  );
}

function WebhookActions({ hook }: { hook: Webhook }) {
  const { client } = useSession();
  const queryClient = useQueryClient();
  const [confirming, setConfirming] = useState(false);
  const remove = useMutation({
    mutationFn: () => client.webhooks.delete(hook.webhook_id),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: ["webhooks"] }),
  });
  return (
    <Group gap="xs" wrap="nowrap">
      <Button component={Link} to={`/webhooks/${encodeURIComponent(hook.webhook_id)}`} size="xs" variant="light">
        Deliveries
      </Button>
      {hook.active &&
        (confirming ? (
          <>
            <Button size="xs" color="red" onClick={() => remove.mutate()} loading={remove.isPending}>
              Confirm delete
            </Button>
            <Button size="xs" variant="default" onClick={() => setConfirming(false)}>
              Keep
            </Button>
          </>
        ) : (
          <Button
            size="xs"
            variant="subtle"
            color="red"
            onClick={() => setConfirming(true)}
            aria-label={`Delete webhook ${hook.callback_url}`}
          >
            Delete
          </Button>
        ))}
      {remove.error && (
        <Text c="red" size="xs" role="alert">
          {errorMessage(remove.error)}
        </Text>
      )}
    </Group>
  );
}

function NewWebhook() {
  const { client } = useSession();
  const queryClient = useQueryClient();
  const [url, setUrl] = useState("");
  const [secret, setSecret] = useState("");
  const [events, setEvents] = useState<string[]>(DEFAULT_WEBHOOK_EVENTS);
  const create = useMutation({
    mutationFn: () => client.webhooks.create({ callback_url: url.trim(), secret, events: events as EventName[] }),
    onSuccess: () => {
      setUrl("");
      setSecret("");
      void queryClient.invalidateQueries({ queryKey: ["webhooks"] });
    },
  });
  return (
    <FormCard
      title="New webhook"
      submission={create}
      failure="The webhook was not created"
      submit="Create webhook"
      notice={
        create.isSuccess && (
          <Text c="var(--mantine-color-green-text)" size="sm" role="status">
            Webhook {create.data.webhook_id} created.
          </Text>
        )
      }
    >
      <TextInput
        label="Callback URL"
        required
        placeholder="https://example.com/labelgate"
        value={url}
        onChange={(e) => setUrl(e.currentTarget.value)}
      />
      <PasswordInput
        label="Signing secret"
        description="At least 16 characters; stored sealed and never shown again. Verify X-SVC-Signature with it."
        required
        autoComplete="new-password"
        value={secret}
        onChange={(e) => setSecret(e.currentTarget.value)}
      />
      <EventChoice label="Events" value={events} onChange={setEvents} />
    </FormCard>
  );
}
