import type { Static } from '@sinclair/typebox';
import type { GroupMemberAdded, GroupMemberQuery, GroupsResponse, OkBody } from '@svc/protocol';
import { apiRequest } from './client.ts';

/** Agent groups (per client): each group's members, add and remove one. */

export type Groups = Static<typeof GroupsResponse>['groups'];
export type GroupMember = Groups[string][number];
/** A membership: the agent, the group, and the agent's client when it has one. */
export type Membership = Static<typeof GroupMemberQuery>;

export function listGroups(): Promise<Static<typeof GroupsResponse>> {
  return apiRequest('GET', '/api/agent-groups');
}

export function addToGroup(member: Membership): Promise<GroupMemberAdded> {
  return apiRequest('POST', '/api/agent-groups', { body: member });
}

export function removeFromGroup(member: Membership): Promise<OkBody> {
  return apiRequest('DELETE', '/api/agent-groups', { query: member });
}
