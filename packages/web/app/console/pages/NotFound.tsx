import { Text } from "@mantine/core";
import { Link } from "react-router";
import { PageHeader } from "../components/common";

export function NotFoundPage() {
  return (
    <>
      <PageHeader title="Page not found" />
      <Text>
        This console has no such page. Go to the <Link to="/">overview</Link>.
      </Text>
    </>
  );
}
