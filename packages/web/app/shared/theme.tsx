/**
 * The Mantine provider of both apps, set up for the gateway's Content-Security-Policy (`style-src 'self'`):
 * no `<style>` element is injected at run time. The theme's CSS variables come from Mantine's static
 * stylesheet (`@mantine/core/styles.css`, default theme), so `withCssVariables` and `withGlobalClasses`
 * are off; components that inject responsive `<style>` tags (Grid, SimpleGrid, Flex, AppShell, responsive
 * style props) are not used. The browser tests fail on any CSP violation.
 */
import "@mantine/core/styles.css";
import "./theme.css";
import { MantineProvider } from "@mantine/core";
import type { ReactNode } from "react";

export function Theme({ children }: { children: ReactNode }) {
  return (
    <MantineProvider withCssVariables={false} withGlobalClasses={false} defaultColorScheme="light">
      {children}
    </MantineProvider>
  );
}
