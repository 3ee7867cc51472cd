/** The item of a claim as the queue prepared it: its preloaded image element itself (already decoded), or a link. */
import { Alert, Loader, Stack, Text } from "@mantine/core";
import { useEffect, useRef } from "react";
import type { ItemView } from "../queue";

/** Puts the preloaded `image` into the returned holder's element (the same element, not a copy). */
export function useImageHolder(image: HTMLImageElement | null) {
  const holder = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const el = holder.current;
    if (!el || !image) return;
    el.replaceChildren(image);
    return () => {
      if (image.parentNode === el) el.removeChild(image);
    };
  }, [image]);
  return holder;
}

/** The item: its image, or a link to open, or its URL when a browser cannot open it. */
export function Media({ view }: { view: ItemView }) {
  const holder = useImageHolder(view.kind === "image" ? view.image : null);
  if (view.kind === "image") {
    return (
      <>
        {/* a picture that did not load is hidden: its alt text would sit beside the alert that says so */}
        <div ref={holder} className="label-image-holder" hidden={view.state === "error"} />
        <ImageState view={view} />
      </>
    );
  }
  if (view.kind === "link") {
    return (
      <Stack gap="xs">
        <Text>This item is not an image. Open it, then pick an option:</Text>
        <a href={view.url} target="_blank" rel="noopener noreferrer" className="label-link">
          {view.url}
        </a>
      </Stack>
    );
  }
  return (
    <Stack gap="xs">
      <Text>This item's URL cannot be opened in a browser:</Text>
      <code className="label-link">{view.url}</code>
    </Stack>
  );
}

/** A loading image's spinner, or the alert of an image that did not load. */
export function ImageState({ view }: { view: Extract<ItemView, { kind: "image" }> }) {
  return (
    <>
      {view.state === "loading" && <Loader size="sm" aria-label="Loading the image" />}
      {view.state === "error" && (
        <Alert color="red" title="The image did not load" className="label-image-error">
          <a href={view.url} target="_blank" rel="noopener noreferrer" className="label-link">
            {view.url}
          </a>
        </Alert>
      )}
    </>
  );
}
