// Parses the feed on stdin with podcast-partytime, Podcast Index's own
// Podcasting 2.0 parser, installed in the folder $PARTYTIME_DIR, and
// writes what it read as JSON on stdout.
"use strict";
const path = require("path");
const pt = require(path.join(process.env.PARTYTIME_DIR, "node_modules", "podcast-partytime"));

let xml = "";
process.stdin.setEncoding("utf8");
process.stdin.on("data", (chunk) => (xml += chunk));
process.stdin.on("end", () => {
  const feed = pt.parseFeed(xml, { allowMissingGuid: false });
  if (!feed) {
    process.stderr.write("partytime: not a feed\n");
    process.exit(1);
  }
  process.stdout.write(
    JSON.stringify({
      title: feed.title,
      guid: feed.guid,
      medium: feed.medium,
      itunesType: feed.itunesType,
      itunesImage: feed.itunesImage,
      owner: feed.owner,
      pubsub: feed.pubsub,
      pc20support: feed.pc20support,
      items: feed.items.map((it) => ({
        title: it.title,
        guid: it.guid,
        link: it.link,
        pubDate: it.pubDate instanceof Date ? it.pubDate.toISOString() : null,
        duration: it.duration,
        author: it.author,
        description: it.description,
        content: it.content,
        enclosure: it.enclosure,
        podcastPeople: it.podcastPeople,
        podcastTranscripts: it.podcastTranscripts,
        podcastTxt: it.podcastTxt,
        podcastChapters: it.podcastChapters,
        itunesImage: it.itunesImage,
      })),
    })
  );
});
