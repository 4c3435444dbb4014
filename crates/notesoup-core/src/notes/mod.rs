//! Notes: identities, addresses, the frontmatter codec and the durable store.
